"""`cobalt bench train` on the tiny model: the bandit side and the multi-turn online GRPO
baseline run on the same stored tasks and report seconds per example and their ratio;
`--real` trains on the bandit dataset, reports the reward per step and, with `--register`,
registers (never promotes) the adapter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assistant.cli import main
from assistant.loop.recorder import record
from assistant.loop.session import Session
from assistant.settings_loader import load_settings
from assistant.store.trajectory_db import Store
from tests.trainer.trainer_fakes import RIGHT_SUM, WRONG_SUM, ScriptedClient, add_problem, answer, sum_problem

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def stored_tasks(tmp_path: Path, sandbox: object) -> Path:
    """Two tasks in a YAML file, each with one stored reference session (wrong, then right)."""
    problems = [sum_problem(), add_problem()]
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(yaml.safe_dump([p.to_dict() for p in problems]))
    cfg = load_settings()
    with Store.open(cfg.paths) as store:
        for problem, wrong, right in (
            (problems[0], WRONG_SUM, RIGHT_SUM),
            (problems[1], "def add(a, b):\n    return a - b", "def add(a, b):\n    return a + b"),
        ):
            client = ScriptedClient([answer(wrong), answer(right)], name="reference")
            record(Session(problem, client, sandbox, cfg.loop.with_turns(3), source="collect"), store).run()
    return tasks


def test_bench_train_side_by_side_and_real(
    cobalt_home: Path, tmp_path: Path, sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = stored_tasks(tmp_path, sandbox)
    cfg = load_settings()
    capsys.readouterr()
    code = main(
        [
            "bench",
            "train",
            "--model",
            "tiny",
            "--tasks",
            str(tasks),
            "--split",
            "all",
            "--limit",
            "2",
            "--steps",
            "1",
            "--generations",
            "2",
            "--turns",
            "2",
            "--max-completion-length",
            "12",
            "--profile",
            "test",
            "--real",
            "--real-steps",
            "1",
            "--register",
            "--json",
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    report = json.loads(out.out)
    assert report["task_ids"] == ["sum-two", "add"]
    cobalt, baseline = report["cobalt"], report["baseline"]
    assert cobalt["examples"] == baseline["examples"] == 2 and cobalt["generations"] == 2
    # the tiny model never writes code, so every baseline trajectory takes all 2 turns
    assert baseline["generations"] == 2 * 2
    assert report["ratio"] == pytest.approx(cobalt["seconds_per_example"] / baseline["seconds_per_example"], rel=1e-2)
    assert report["target"] == 0.5 and isinstance(report["meets_target"], bool)
    assert len(report["real"]["reward_curve"]) == 1 and isinstance(report["real"]["rose"], bool)
    from trainer.release.registry import Registry

    registry = Registry.open(cfg.paths)
    (version,) = registry.versions("tiny")
    assert report["real"]["registered"] == {"version": version.version, "name": version.name}
    assert (version.path / "adapter_config.json").is_file() and registry.current("tiny") is None
