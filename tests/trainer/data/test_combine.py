"""`cobalt dataset combine` on the two committed datasets (own-1's and own-7's): seeded draws
that are subsets of their inputs and repeat for a seed, validation rows and problems as a union
without repeats, the inputs' hashes in meta.json, and a clear error on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.errors import UserError
from trainer.cli.dataset_cmd import _takes
from trainer.data.combine import combine
from trainer.data.dataset_files import load_split, read_meta, read_rows, validation_problems

ROOT = Path(__file__).resolve().parents[3]
OWN1 = ROOT / "examples/adapters/qwen-coder-own-1/dataset"
OWN7 = ROOT / "docs/experiments/data/train/qwen-coder-own-7-dataset"


def _keys(rows: list[dict]) -> list[str]:
    return [json.dumps(r, sort_keys=True) for r in rows]


def test_draws_are_seeded_subsets_and_validation_is_a_union(tmp_path: Path) -> None:
    meta = combine([OWN1, OWN7], tmp_path / "a", take=[10, None], seed=3)
    train = read_rows(tmp_path / "a", "train")
    first, second = _keys(read_rows(OWN1, "train")), _keys(read_rows(OWN7, "train"))
    assert len(train) == 10 + len(second)
    assert set(_keys(train[:10])) <= set(first) and _keys(train[10:]) == second
    assert [p["taken"] for p in meta["combined"]["parts"]] == [10, len(second)]
    assert [p["data_hash"] for p in meta["combined"]["parts"]] == [
        read_meta(OWN1)["data_hash"],
        read_meta(OWN7)["data_hash"],
    ]
    again = combine([OWN1, OWN7], tmp_path / "b", take=[10, None], seed=3)
    other = combine([OWN1, OWN7], tmp_path / "c", take=[10, None], seed=4)
    assert again["data_hash"] == meta["data_hash"] != other["data_hash"]

    validation = _keys(read_rows(tmp_path / "a", "validation"))
    inputs = set(_keys(read_rows(OWN1, "validation"))) | set(_keys(read_rows(OWN7, "validation")))
    assert len(validation) == len(set(validation)) == len(inputs)
    hashes = [p.content_hash() for p in validation_problems(tmp_path / "a")]
    expected = {p.content_hash() for d in (OWN1, OWN7) for p in validation_problems(d)}
    assert len(hashes) == len(set(hashes)) == len(expected)
    assert len(load_split(tmp_path / "a", "train")) == len(train)


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot take 1000"):
        combine([OWN1, OWN7], tmp_path / "x", take=[1000, None])
    with pytest.raises(UserError, match="at least two"):
        combine([OWN1], tmp_path / "x", take=[None])
    with pytest.raises(UserError, match="not a built dataset"):
        combine([OWN1, tmp_path], tmp_path / "x", take=[None, None])
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(UserError, match="not empty"):
        combine([OWN1, OWN7], tmp_path / "full", take=[None, None])
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"
    assert _takes("48,all", 2) == [48, None]
    with pytest.raises(UserError, match="whole number"):
        _takes("4.5,all", 2)


def test_a_column_only_later_rows_have_is_kept_when_loaded(tmp_path: Path) -> None:
    """Combining an unguided dataset before a guided one: the guides must reach training."""
    from trainer.data import dataset_files

    rows = [{"prompt": "a", "prev_best": 0.0}, {"prompt": "b", "prev_best": 0.5, "guide": "def f(): ..."}]
    dataset_files.write(tmp_path / "d", rows, [], [], {})
    loaded = load_split(tmp_path / "d", "train")
    assert loaded["guide"] == [None, "def f(): ..."] and loaded["prompt"] == ["a", "b"]
