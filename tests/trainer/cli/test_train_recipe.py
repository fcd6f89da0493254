"""`cobalt train --max-steps N --seed S --no-budget`: a published recipe runs to a fixed step
count with its seed and no wall-clock stop, also when it re-runs as ranks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from trainer.cli import train_cmd
from trainer.training import grpo, launcher


class FakeSandbox:
    def close(self) -> None:
        pass


def test_recipe_flags_reach_training(tmp_path: Path, cobalt_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "train.jsonl").write_text("{}\n")
    (tmp_path / "meta.json").write_text('{"data_hash": "abc"}')
    seen: dict[str, Any] = {}

    def train(settings: Any, **kwargs: Any) -> grpo.TrainResult:
        seen.update(kwargs, max_minutes=settings.max_minutes)
        meta = {"metrics": {"steps": kwargs["max_steps"], "wall_s": 1.0, "mean_reward": 0.0}}
        return grpo.TrainResult(tmp_path / "adapter", meta)

    monkeypatch.setattr(train_cmd, "open_sandbox", lambda config: FakeSandbox())
    monkeypatch.setattr(grpo, "train", train)
    argv = ["train", "--dataset", str(tmp_path), "--model", "tiny", "--profile", "cpu-small", "--json"]
    assert main([*argv, "--max-steps", "3", "--seed", "11", "--no-budget"]) == 0
    assert (seen["max_steps"], seen["seed"], seen["max_minutes"]) == (3, 11, 0.0)
    seen.clear()
    assert main(argv) == 0
    assert "seed" not in seen and seen["max_minutes"] == 90  # the profile's budget stays for the nightly job


def test_ranks_get_the_recipe_flags() -> None:
    argv = launcher.train_args(
        dataset=Path("d"), out=Path("o"), model="m", profile="p", max_steps=3, seed=11, no_budget=True
    )
    assert argv[-5:] == ["--max-steps", "3", "--seed", "11", "--no-budget"]
    assert "--seed" not in launcher.train_args(dataset=Path("d"), out=Path("o"), model="m", profile="p")
