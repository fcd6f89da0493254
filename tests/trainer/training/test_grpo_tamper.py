"""Integration (issue 14): GRPO steps on the tiny model, rewarded by the real sandbox, where
the model writes a program that forges its grading (it returns the expected value read from
the calling test's constants). The hidden canary catches it: its reward is -1 and the run's
sandbox totals count it as tampered. A generation bias (`trainer_fakes.code_bias`) makes
the random tiny model write either that program or an honest one."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.loop import extract
from assistant.serving import models
from tests.trainer.trainer_fakes import FORGE_ADD, RIGHT_ADD, WRONG_ADD, add_problem, code_bias, session
from trainer.data.build import build
from trainer.train_settings import load_train_settings
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
    settings = load_train_settings(cfg.train, "test")
    settings.grpo.update(
        max_completion_length=72,
        num_generations=4,
        per_device_train_batch_size=4,
        generation_kwargs={"sequence_bias": code_bias(models.resolve("tiny", cfg.paths), [FORGE_ADD, RIGHT_ADD])},
    )
    sessions = [session(add_problem(), [0.0, 1.0], "s1", programs=[WRONG_ADD, RIGHT_ADD])]
    build(sessions, tmp_path / "ds", settings, tokenizer=None, sandbox=None, loop=cfg.loop, perturb=False)
    RecordingReward.seen = []
    monkeypatch.setattr(grpo, "SandboxReward", RecordingReward)

    result = grpo.train(
        settings,
        model="tiny",
        dataset=tmp_path / "ds",
        out=tmp_path / "run",
        paths=cfg.paths,
        sandbox=sandbox,
        max_steps=2,
        progress=lambda _: None,
    )

    forging = [r for program, r in RecordingReward.seen if program and "_getframe" in program]
    assert forging, f"the biased tiny model wrote no forging program: {RecordingReward.seen}"
    exact = [r for program, r in RecordingReward.seen if program and program.strip() == FORGE_ADD]
    assert exact and all(r == TAMPERED == -1.0 for r in exact)
    totals = result.meta["metrics"]["sandbox"]
    assert totals["tampered"] >= len(exact) and totals["flagged"] >= len(exact)
    assert totals["faults_dropped"] == 0
