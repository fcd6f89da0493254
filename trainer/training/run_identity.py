"""What a training directory was started for (`<out>/run.json`): the base model, the dataset's
hash, the parent adapter, the seed and the recipe's hash. A later `cobalt train`
into the same directory continues it (resumes from its newest checkpoint, or returns its saved
adapter) only when they match; otherwise one sentence says what differs, so weights trained on one
dataset, parent, seed or recipe are never continued, or returned, as another's (a resume under
another seed would reorder the prompts TRL skips by the step count)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from assistant.errors import UserError

RUN = "run.json"
OPTIONAL = ("seed", "recipe")  # recorded since 2026-11-30; older records lack them


# GRPOConfig keys that do not change what is learnt (logging, saving, where), nor the dtype, which
# follows the CPU (`train.cpu_bf16`), nor where it stops: a run may resume with other values of them
NOT_RECIPE = frozenset(
    {"output_dir", "logging_steps", "logging_dir", "save_steps", "save_total_limit", "save_strategy"}
    | {"report_to", "run_name", "disable_tqdm", "bf16", "fp16", "dataloader_num_workers", "max_steps"}
)


def recipe_hash(settings: Any, grpo_overrides: dict[str, Any], sanitize: bool = True) -> str:
    """A short hash of what the run learns by: the GRPO keys (but `NOT_RECIPE`), the LoRA, the
    reward and the anchors of `settings` (`TrainSettings`), and how answers are graded."""
    grpo = {k: v for k, v in {**settings.grpo, **grpo_overrides}.items() if k not in NOT_RECIPE}
    data = {
        "grpo": grpo,
        "lora": settings.lora,
        "reward": settings.reward.model_dump(),
        "greedy_anchor": settings.greedy_anchor,
        "guide_anchor": settings.guide_anchor,
        "stop_at_fence": settings.stop_at_fence,
        "suppress_docstrings": settings.suppress_docstrings,
        "sanitize_answers": sanitize,
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def identity(
    model: str, data_meta: dict[str, Any], parent: Any, seed: int | None = None, recipe: str | None = None
) -> dict[str, Any]:
    """The run's identity: the base model, the dataset and the parent, and (when given) the seed and
    the recipe's hash, which order the prompts and say what is learnt. The step count is not part of
    it: a run may be resumed to stop sooner or go on longer (`--max-steps`)."""
    extra = {"seed": seed, "recipe": recipe}
    return {
        "base_model": model,
        "data_hash": data_meta.get("data_hash"),
        "parent_version": getattr(parent, "version", None),
        **{k: v for k, v in extra.items() if v is not None},
    }


def claim(out: Path, ident: dict[str, Any]) -> None:
    """Record `ident` as the run of `out`, or check that it is the one recorded there."""
    path = out / RUN
    if path.is_file():
        try:
            recorded = json.loads(path.read_text())
        except ValueError:
            recorded = None
        if isinstance(recorded, dict):
            differ = [  # a key the record lacks (written before it was recorded) is not compared
                f"{key} {recorded.get(key)!r} there, {value!r} now"
                for key, value in ident.items()
                if (key in recorded or key not in OPTIONAL) and recorded.get(key) != value
            ]
            if differ:
                raise UserError(
                    f"{out} holds a training run of another setup ({'; '.join(differ)}); "
                    "train into a new --out, or delete that directory to start over"
                )
            return
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{RUN}.{os.getpid()}"
    tmp.write_text(json.dumps(ident, indent=2, sort_keys=True))
    os.replace(tmp, path)
