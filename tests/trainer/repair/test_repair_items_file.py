"""`repair:FILE.jsonl`: items read back as written, ids numbered per problem, and every
unusable line refused with one sentence naming file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.problems.schema import Problem, ProblemError
from sandbox.api import TestCase
from trainer.repair.items import RepairItem, load_items, write_items

INC = Problem(
    id="inc",
    statement="Write inc(x).",
    kind="function",
    entry_point="inc",
    public_tests=[TestCase(code="assert inc(1) == 2")],
    hidden_tests=[TestCase(code="assert inc(1) == 2")],
)


def test_items_round_trip_and_ids(tmp_path: Path) -> None:
    path = tmp_path / "bugs.jsonl"
    write_items(
        [
            RepairItem("x", INC, "def inc(x):\n    return x\n", "returns x"),
            RepairItem("y", INC, "def inc(x):\n    return x - 1\n"),
        ],
        path,
    )
    items = load_items(path)
    assert [i.id for i in items] == ["inc#m0", "inc#m1"]
    assert items[0].problem.to_dict() == INC.to_dict() and items[0].mutation == "returns x"
    assert items[1].buggy_program.endswith("x - 1\n")


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "bugs.jsonl:2: not valid JSON"),
        ("[1, 2]", "bugs.jsonl:2: a repair item must be a JSON object"),
        (json.dumps(INC.to_dict()), "bugs.jsonl:2: the field 'buggy_program' is missing or empty"),
        (json.dumps({**INC.to_dict(), "buggy_program": "x = 1", "mutation": 3}), "bugs.jsonl:2: the field 'mutation'"),
        (json.dumps({"buggy_program": "x = 1"}), "bugs.jsonl:2"),
    ],
)
def test_bad_lines_are_refused_with_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bugs.jsonl"
    good = json.dumps({**INC.to_dict(), "buggy_program": "def inc(x):\n    return x\n"})
    path.write_text(good + "\n" + line + "\n")
    with pytest.raises(ProblemError) as err:
        load_items(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_empty_or_missing_file(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ProblemError, match="holds no repair items"):
        load_items(tmp_path / "empty.jsonl")
    with pytest.raises(ProblemError, match="no such repair item file"):
        load_items(tmp_path / "missing.jsonl")
