"""The training run's log: every logged step of GRPO appended to `metrics.jsonl` (reward, loss,
KL, sandbox faults, the step's time split) and a progress line per step, with the time the
remaining steps will take at this process's pace; `read_metrics` reads it.

The file is the raw history: a run resumed from a checkpoint older than its last logged step logs
those steps again, and a crash can tear the last line. `read_metrics` gives each step once, its
latest row (the one the checkpoints continue from), and skips torn lines."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from assistant.loop.progress_lines import about
from assistant.store.jsonl_log import append_row, read_rows
from trainer.training.reward import SandboxReward

Progress = Callable[[str], None]


class MetricsLog:
    """A TrainerCallback that appends every log line to metrics.jsonl and reports progress."""

    def __init__(self, path: Path, reward: SandboxReward, progress: Progress, is_main: bool = True) -> None:
        from transformers import TrainerCallback

        outer = self

        class _Callback(TrainerCallback):
            def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
                outer.record(state, logs or {})

        self.callback = _Callback()
        self.path, self.reward, self.progress, self.is_main = path, reward, progress, is_main
        self.started = time.monotonic()
        self.rows: list[dict[str, Any]] = []

    def record(self, state: Any, logs: dict[str, Any]) -> None:
        if "reward" not in logs:
            return  # the end-of-training summary line
        row = {
            "step": int(state.global_step),
            "max_steps": int(state.max_steps),
            "elapsed_s": round(time.monotonic() - self.started, 2),
            "sandbox_faults_dropped": self.reward.totals["faults_dropped"],
            **{k: (float(v) if isinstance(v, (int, float)) else v) for k, v in logs.items()},
        }
        self.rows.append(row)
        if not self.is_main:
            return
        append_row(self.path, row)
        self.progress(
            f"step {row['step']}/{row['max_steps']} · reward {row['reward']:+.3f} "
            f"± {row.get('reward_std', 0.0):.3f} · kl {row.get('kl', 0.0):.4f} · "
            f"{row['elapsed_s']:.0f} s · faults dropped {row['sandbox_faults_dropped']}{_split(row)}"
            f"{_left(self.rows)}"
        )


def _split(row: dict[str, Any]) -> str:
    """The step's time split for the progress line ('' without the timers)."""
    if "time/step_s" not in row:
        return ""
    loss = row.get("time/loss_forward_s", 0.0) + row.get("time/loss_backward_s", 0.0)
    return (
        f" · generate {row.get('time/generate_s', 0.0):.0f} s, reward {row.get('time/reward_s', 0.0):.0f} s, "
        f"loss {loss:.0f} s of {row['time/step_s']:.0f} s"
    )


def _left(rows: list[dict[str, Any]]) -> str:
    """' · about 2 h 5 min left': the steps still to run at the mean pace of this process's steps
    (its own step timers when logged; a resumed run counts only the steps it ran itself)."""
    last = rows[-1]
    remaining = int(last["max_steps"]) - int(last["step"])
    if remaining <= 0:
        return ""
    timed = [r["time/step_s"] for r in rows if "time/step_s" in r]
    pace = sum(timed) / len(timed) if timed else float(last["elapsed_s"]) / len(rows)
    return f" · {about(remaining * pace)} left"


def read_metrics(out: Path) -> list[dict[str, Any]]:
    """The log's rows, one per step in step order: each step's latest row; torn lines skipped."""
    latest = {int(row["step"]): row for row in read_rows(out / "metrics.jsonl") if "step" in row}
    return [latest[step] for step in sorted(latest)]
