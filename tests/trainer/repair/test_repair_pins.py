"""The pinned `humaneval-repair` items: ids and counts of every split are fixed (they
derive from the mutator's seed, configs/eval.yaml's split and the pin file), the splits do
not share a task, and rebuilding a few tasks' items in the real sandbox (canonical passes,
mutant fails a public test) gives exactly the pinned ones."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from assistant.problems.schema import ProblemError
from trainer.repair.items import MutateParams, build_items, humaneval_sources
from trainer.repair.pins import PIN_FILE, pinned_items

PINNED = {  # split: (items, tasks, sha256 of the newline-joined ids [:16], first ids)
    "test": (210, 77, "d86e2068dd45fe6d", ["HumanEval/7#m0", "HumanEval/10#m0", "HumanEval/10#m1"]),
    "train": (174, 60, "22edc68645541402", ["HumanEval/0#m0", "HumanEval/0#m1", "HumanEval/0#m2"]),
    "val": (46, 16, "5b9895ab8165f025", ["HumanEval/3#m0", "HumanEval/3#m1", "HumanEval/3#m2"]),
}


@pytest.mark.parametrize("split", sorted(PINNED))
def test_split_items_are_pinned(split: str) -> None:
    items = pinned_items(split)
    ids = [i.id for i in items]
    count, tasks, digest, first = PINNED[split]
    assert (len(ids), len({i.task for i in items})) == (count, tasks)
    assert hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16] == digest and ids[:3] == first
    assert all(i.buggy_program != i.problem.starter_code and i.mutation.startswith("line ") for i in items)


def test_splits_share_no_task() -> None:
    tasks = {s: {i.task for i in pinned_items(s)} for s in PINNED}
    assert not (tasks["test"] & tasks["train"]) and not (tasks["test"] & tasks["val"])
    assert not (tasks["train"] & tasks["val"])


def test_a_changed_mutator_is_refused(tmp_path: Path) -> None:
    data = json.loads(PIN_FILE.read_text())
    data["tasks"]["HumanEval/0"][0]["sha"] = "0" * 16
    path = tmp_path / "pins.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ProblemError, match="HumanEval/0#m0 no longer matches"):
        pinned_items("train", path=path)


@pytest.mark.docker
def test_rebuilding_in_the_sandbox_gives_the_pinned_items(sandbox: Any) -> None:
    wanted = {"HumanEval/0", "HumanEval/7", "HumanEval/16"}  # HumanEval/16: no mutant is kept
    sources = [s for s in humaneval_sources("all") if s[0].id in wanted]
    data = json.loads(PIN_FILE.read_text())
    items, log = build_items(sources, sandbox, MutateParams(**data["params"]))
    pinned = [i for s in ("train", "test") for i in pinned_items(s) if i.task in wanted]
    assert sorted((i.id, i.buggy_program) for i in items) == sorted((i.id, i.buggy_program) for i in pinned)
    assert log["no_mutant"] == ["HumanEval/16"] and log["canonical_failed"] == []
