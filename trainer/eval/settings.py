"""Evaluation settings: `configs/eval.yaml`, deep-merged with the `eval:` section of the
loaded config (so `--config FILE` and `COBALT__EVAL__...` variables override it).

This module reads settings only; `trainer.eval.evaluate` runs evaluations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assistant.config import REPO_CONFIGS, merge, read_yaml
from assistant.settings import LoopSettings
from assistant.splits import SplitRule

EVAL_CONFIG = REPO_CONFIGS / "eval.yaml"


@dataclass
class EvalSettings:
    """What `cobalt eval` and the retraining gate read from `configs/eval.yaml`."""

    split_seed: int = SplitRule.split_seed
    """Orders task ids by sha256("<seed>:<id>"); fixed forever for HumanEval."""
    test_share: float = SplitRule.test_share
    """Share of the task ids in the `test` split (rounded)."""
    val_share_of_train: float = SplitRule.val_share_of_train
    """Share of the remaining (train pool) ids carved out as `val` (rounded)."""
    perturb_seed: int = 0
    """Seeds the choice of the two swapped public tests (with the problem id)."""
    resamples: int = 2000
    """Bootstrap resamples (over problems)."""
    confidence: float = 0.95
    """Width of every bootstrap interval."""
    bootstrap_seed: int = 0
    """Seeds the bootstrap, so a report is reproducible from its samples."""
    loop: dict[str, Any] = field(default_factory=lambda: {"repeat_resamples": 0})
    """Overrides of the `loop:` config section for evaluation sessions."""
    compare_metric: str = "pass_at_1"
    """The metric the `not_worse` verdict of a comparison looks at."""
    compare_turn: int = -1
    """The turn of that metric (-1: the last)."""
    margin: float = 0.0
    """Not worse: the upper end of the paired interval of (B - A) is at least -margin."""

    @classmethod
    def from_config(cls, cfg: dict[str, Any] | None = None) -> "EvalSettings":
        data = merge(read_yaml(EVAL_CONFIG), (cfg or {}).get("eval") or {})
        split, boot = data.get("split") or {}, data.get("bootstrap") or {}
        compare = data.get("compare") or {}
        rule = SplitRule.from_section(split)
        return cls(split_seed=rule.split_seed, test_share=rule.test_share,
                   val_share_of_train=rule.val_share_of_train,
                   perturb_seed=int((data.get("perturb") or {}).get("seed", cls.perturb_seed)),
                   resamples=int(boot.get("resamples", cls.resamples)),
                   confidence=float(boot.get("confidence", cls.confidence)),
                   bootstrap_seed=int(boot.get("seed", cls.bootstrap_seed)),
                   loop=dict(data.get("loop") or {}),
                   compare_metric=str(compare.get("metric", cls.compare_metric)),
                   compare_turn=int(compare.get("turn", cls.compare_turn)),
                   margin=float(compare.get("margin", cls.margin)))

    def loop_settings(self, cfg: dict[str, Any], turns: int) -> LoopSettings:
        """The loop settings of evaluation sessions: the config's, with the `loop:` overrides."""
        return LoopSettings.from_config(merge(cfg, {"loop": self.loop}), turns=turns)
