"""The nightly job hands its `--config` file on to training ranks started under `accelerate launch`,
so every rank trains with the settings (data dir, registry, recipe) the job itself loaded."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assistant.errors import UserError
from trainer.release import nightly
from trainer.release.nightly import Retrain
from trainer.train_settings import load_train_settings


def test_launched_ranks_get_the_jobs_config_file(
    home_config: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr(nightly.launcher, "run", lambda settings, argv, progress: seen.append(argv) or 3)
    settings = load_train_settings(home_config.train, "test")
    job = Retrain(home_config, settings, model="tiny", progress=lambda _: None, config_file="my.yaml")
    with pytest.raises(UserError, match="exited with code 3"):
        job._train_launched(SimpleNamespace(path=tmp_path), None)
    (argv,) = seen
    assert argv[argv.index("--config") + 1] == "my.yaml" and argv.index("--config") < argv.index("train")
