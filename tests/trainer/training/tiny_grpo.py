"""A small GRPO run on the tiny model for the training tests: the `test` profile biased
towards chosen programs, a dataset of one session, and the training call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assistant.problems.schema import Problem
from assistant.serving import models
from tests.trainer.trainer_fakes import code_bias, session
from trainer.data.build import build
from trainer.train_settings import TrainSettings, load_train_settings
from trainer.training import grpo


def biased_settings(cfg: Any, programs: list[str], completion_length: int, generations: int) -> TrainSettings:
    """The `test` training profile, its tiny model biased towards writing `programs` (see
    `code_bias`), `generations` completions per prompt in one batch."""
    settings = load_train_settings(cfg.train, "test")
    settings.grpo.update(
        max_completion_length=completion_length,
        num_generations=generations,
        per_device_train_batch_size=generations,
        generation_kwargs={"sequence_bias": code_bias(models.resolve("tiny", cfg.paths), programs)},
    )
    return settings


def one_session_dataset(out: Path, cfg: Any, settings: TrainSettings, problem: Problem, wrong: str, right: str) -> Path:
    """A training dataset built into `out` from one session: `wrong` fails turn 1, `right` passes turn 2."""
    sessions = [session(problem, [0.0, 1.0], "s1", programs=[wrong, right])]
    build(sessions, out, settings, tokenizer=None, sandbox=None, loop=cfg.loop, perturb=False)
    return out


def train_tiny(
    settings: TrainSettings, cfg: Any, sandbox: Any, dataset: Path, out: Path, max_steps: int, progress: Any = None
) -> grpo.TrainResult:
    """GRPO on the tiny model for `max_steps` steps, rewarded by `sandbox` (progress lines go
    to `progress`, or nowhere)."""
    return grpo.train(
        settings,
        model="tiny",
        dataset=dataset,
        out=out,
        paths=cfg.paths,
        sandbox=sandbox,
        max_steps=max_steps,
        progress=progress or (lambda _: None),
    )
