"""`RepairSettings`: configs/repair.yaml read once (`repair_settings`) into typed sections: how
the repair items are made (`mutate:`, `MutateParams`), the synthetic curriculum
(`curriculum:`), how the benchmark samples (`benchmark:`) and the blind control's re-ask
(`reask:`). Commands read it once and hand it (or the section they need) down.

This module describes settings; `trainer.repair.items` builds items, `trainer.repair.repair_run`
runs them.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from assistant.config_files import REPO_CONFIGS, read_typed
from assistant.settings import Section
from assistant.settings_loader import merge

REPAIR_YAML = REPO_CONFIGS / "repair.yaml"


class MutateParams(Section):
    """The `mutate:` section: seeded single mutations of each task's canonical solution
    (`trainer.repair.mutate`). Never change seed or per_task for HumanEval: the items of each
    split are pinned (`trainer/repair/humaneval_pins.json` records them)."""

    model_config = ConfigDict(frozen=True)

    seed: int = Field(0, description="Seeds the order in which candidate mutants are tried.")
    per_task: int = Field(3, ge=1, description="Mutants kept per task at most.")
    max_candidates: int = Field(12, ge=1, description="Candidates tried per task at most (in the seeded order).")
    build_timeout_s: float = Field(
        6.0,
        gt=0,
        description="Per-test timeout while checking candidates (generous: a loaded machine must not drop a task).",
    )
    exclude_timeouts: bool = Field(
        True, description="A mutant that times out (or runs out of memory) on any test is not kept."
    )


class CurriculumSection(Section):
    """The `curriculum:` section: synthetic repair sessions from the train split
    (`cobalt dataset synthesize`, `trainer.repair.curriculum`), in the seeded order of `mutate:`."""

    model_config = ConfigDict(frozen=True)

    per_task: int = Field(6, ge=1, description="Mutants per task.")
    max_candidates: int = Field(24, ge=1, description="Candidates tried per task at most.")
    concurrency: int = Field(4, ge=1, description="Sessions graded at once.")
    render: Literal["served", "canonical"] = Field(
        "served",
        description="How a synthetic turn's program is written: `served` like the served model's replies "
        "(no docstrings, no comments; trainer.repair.served_form), `canonical` as the mutant is "
        "(the sessions stored before issue 25).",
    )


class BenchmarkSection(Section):
    """The `benchmark:` section: how the repair benchmark samples (`trainer.repair.repair_run`)."""

    model_config = ConfigDict(frozen=True)

    turns: int = Field(
        1, ge=1, description="T: model turns after the buggy program's turn (a session stops once public tests pass)."
    )
    temperature: float = Field(0.0, ge=0, description="Sampling temperature (0: greedy).")
    top_p: float = Field(1.0, gt=0, le=1, description="Nucleus sampling.")
    max_tokens: int | None = Field(
        None, ge=1, description="Completion tokens per reply (None: the loop's, model.max_tokens)."
    )
    concurrency: int = Field(4, ge=1, description="Sessions at a time.")
    blind: bool = Field(True, description="Also run the blind control (the feedback turn is a plain re-ask).")


class RepairSettings(Section):
    """configs/repair.yaml."""

    model_config = ConfigDict(frozen=True)

    mutate: MutateParams = Field(default_factory=MutateParams, description="How repair items are made.")
    curriculum: CurriculumSection = Field(
        default_factory=CurriculumSection, description="The synthetic curriculum's mutants."
    )
    benchmark: BenchmarkSection = Field(default_factory=BenchmarkSection, description="How the benchmark samples.")
    reask: str = Field("", description="The blind control's feedback turn: no execution feedback at all.")

    def merged(self, overrides: dict[str, Any]) -> "RepairSettings":
        """A validated copy with `overrides` (shaped like the file) deep-merged over it."""
        return type(self).model_validate(merge(self.model_dump(), overrides))

    def curriculum_params(self, per_task: int | None = None) -> MutateParams:
        """The mutation parameters of the curriculum: `mutate:` with `curriculum:`'s counts
        (`per_task`: another number of mutants per task)."""
        return self.mutate.model_copy(
            update={"per_task": per_task or self.curriculum.per_task, "max_candidates": self.curriculum.max_candidates}
        )


@cache
def repair_settings(path: Path = REPAIR_YAML) -> RepairSettings:
    """configs/repair.yaml (or `path`), read once per process."""
    return read_typed(path, RepairSettings)
