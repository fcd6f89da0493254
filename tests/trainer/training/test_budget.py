"""`train.max_minutes`: a real GRPO run on the tiny model stops after the first step past its
wall-clock budget, saves a checkpoint and writes the adapter; bad values are one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.errors import UserError
from assistant.settings_loader import ConfigError, load_settings
from tests.trainer.training.tiny_grpo import sum_run, train_tiny
from trainer.train_settings import load_train_settings
from trainer.training import grpo
from trainer.training.budget import time_budget


def test_no_budget_means_no_callback() -> None:
    assert time_budget(0) is None and time_budget(-1) is None
    assert load_train_settings(None, "test").max_minutes == 0
    assert load_train_settings(None, "cpu-small").max_minutes == 90


@pytest.mark.parametrize("value", [-5, "soon"])
def test_bad_budget_is_one_sentence(value: object, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config key train.max_minutes"):
        load_settings(overrides={"train": {"max_minutes": value}})
    train_yaml = tmp_path / "train.yaml"
    train_yaml.write_text(f"max_minutes: {value}\nprofiles: {{test: {{}}}}\n")
    with pytest.raises(UserError, match="train.max_minutes: must be a number of minutes >= 0"):
        load_train_settings(None, "test", path=train_yaml)


@pytest.mark.docker
def test_budget_stops_training_and_saves_the_adapter(tmp_path: Path, sandbox, home_config) -> None:
    cfg = home_config
    settings, dataset = sum_run(cfg, tmp_path / "ds")
    settings.max_minutes = 1e-6  # every step ends past it
    said: list[str] = []

    result = train_tiny(settings, cfg, sandbox, dataset, tmp_path / "run", max_steps=3, progress=said.append)

    assert result.meta["stopped_by_budget_at"] == 1 and result.meta["metrics"]["steps"] == 1
    assert result.meta["config"]["max_minutes"] == 1e-6
    assert (tmp_path / "run" / "checkpoints" / "checkpoint-1" / "trainer_state.json").is_file()
    assert not (tmp_path / "run" / "checkpoints" / "checkpoint-3").exists()
    assert (result.adapter / "adapter_model.safetensors").is_file()
    assert json.loads((result.adapter / grpo.ADAPTER_META).read_text())["stopped_by_budget_at"] == 1
    assert any("time budget" in line and "after step 1/3" in line for line in said)
