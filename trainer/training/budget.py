"""A wall-clock budget for one training run (`train.max_minutes`): a TrainerCallback that
ends training after the first step that finishes past the budget, saving a checkpoint so the
adapter is written as after `max_steps`. The budget counts from the start of this process's
training (a resumed run gets a new budget). Under `accelerate launch` rank 0 decides and the
decision is broadcast, so every rank stops at the same step.
"""

from __future__ import annotations

import time
from typing import Any, Callable


def _agree(stop: bool) -> bool:
    """Rank 0's decision on every rank (the ranks' clocks may disagree by a step)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return stop
    import torch

    on = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else "cpu"
    flag = torch.tensor([1 if stop else 0], dtype=torch.int32, device=on)  # NCCL broadcasts CUDA tensors only
    dist.broadcast(flag, src=0)
    return bool(flag.item())


def time_budget(
    minutes: float, progress: Callable[[str], None] = print, clock: Callable[[], float] = time.monotonic
) -> Any:
    """A callback that stops training once `minutes` have passed (None for 0: no budget)."""
    if not minutes or minutes <= 0:
        return None
    from transformers import TrainerCallback

    limit_s = float(minutes) * 60.0

    class TimeBudget(TrainerCallback):
        def __init__(self) -> None:
            self.started: float | None = None
            self.stopped_at: int | None = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            self.started = clock()

        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            if self.started is None or control.should_training_stop:
                return
            if _agree(clock() - self.started >= limit_s):
                self.stopped_at = int(state.global_step)
                control.should_training_stop = True
                control.should_save = True
                progress(
                    f"time budget of {minutes:g} min reached after step {state.global_step}/"
                    f"{state.max_steps}: stopping and saving the adapter"
                )

    return TimeBudget()
