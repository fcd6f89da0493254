"""Integration (issue 14): GRPO steps on the tiny model, rewarded by the real sandbox, where
the model writes a program that forges its grading (it returns the expected value read from
the calling test's constants). The hidden canary catches it: its reward is -1 and the run's
sandbox totals count it as tampered. A generation bias (`trainer_fakes.code_bias`) makes
the random tiny model write either that program or an honest one."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.messages import extract
from tests.trainer.trainer_fakes import FORGE_ADD, RIGHT_ADD, WRONG_ADD, add_problem
from tests.trainer.training.tiny_grpo import biased_settings, one_session_dataset, train_tiny
from trainer.training import grpo
from trainer.training.reward import TAMPERED, SandboxReward, completion_text

pytestmark = [pytest.mark.docker]


class RecordingReward(SandboxReward):
    """The real reward function, keeping each completion's program and reward."""

    seen: list[tuple[str | None, float | None]] = []

    def __call__(self, prompts, completions, *args, **kwargs):
        rewards = super().__call__(prompts, completions, *args, **kwargs)
        programs = [extract.code(completion_text(c)) for c in completions]
        RecordingReward.seen += list(zip(programs, rewards))
        return rewards


def test_a_forging_completion_gets_minus_one_and_is_counted(
    tmp_path: Path, sandbox, test_config, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = test_config
    settings = biased_settings(cfg, [FORGE_ADD, RIGHT_ADD], completion_length=72, generations=4)
    dataset = one_session_dataset(tmp_path / "ds", cfg, settings, add_problem(), WRONG_ADD, RIGHT_ADD)
    RecordingReward.seen = []
    monkeypatch.setattr(grpo, "SandboxReward", RecordingReward)

    result = train_tiny(settings, cfg, sandbox, dataset, tmp_path / "run", max_steps=2)

    forging = [r for program, r in RecordingReward.seen if program and "_getframe" in program]
    assert forging, f"the biased tiny model wrote no forging program: {RecordingReward.seen}"
    exact = [r for program, r in RecordingReward.seen if program and program.strip() == FORGE_ADD]
    assert exact and all(r == TAMPERED == -1.0 for r in exact)
    totals = result.meta["metrics"]["sandbox"]
    assert totals["tampered"] >= len(exact) and totals["flagged"] >= len(exact)
    assert totals["faults_dropped"] == 0
