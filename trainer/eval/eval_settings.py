"""Evaluation settings as the evaluation code reads them: the loaded `eval:` section
(`assistant.settings.EvalSection`: configs/eval.yaml, then `--config FILE` and
`COBALT__EVAL__...` variables), flattened, and usable as a split `Rule`.

This module holds settings only; `trainer.eval.evaluate` runs evaluations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assistant.problems.splits import SplitRule

if TYPE_CHECKING:
    from assistant.settings import EvalSection, LoopSettings


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
    def from_section(cls, section: EvalSection) -> "EvalSettings":
        """From the loaded `eval:` settings section."""
        return cls(split_seed=section.split.seed, test_share=section.split.test_share,
                   val_share_of_train=section.split.val_share_of_train, perturb_seed=section.perturb.seed,
                   resamples=section.bootstrap.resamples, confidence=section.bootstrap.confidence,
                   bootstrap_seed=section.bootstrap.seed, loop=dict(section.loop),
                   compare_metric=section.compare.metric, compare_turn=section.compare.turn,
                   margin=section.compare.margin)

    def loop_settings(self, loop: LoopSettings, turns: int) -> LoopSettings:
        """The loop settings of evaluation sessions: `loop` with the `loop:` overrides."""
        return loop.merged({**self.loop, "turns": turns})
