"""`cobalt dataset feedback-needed` on the committed own-1 dataset: only the repair contexts of
items that the report's blind arm left broken are kept (perturbed twins included); first-turn
prompts, contexts of items fixed blind and contexts of items the report does not hold are
dropped and counted; validation rows pass through; bad input is one clear error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assistant.errors import UserError
from assistant.store.trajectory_db import Store
from tests.trainer.trainer_fakes import add_problem, session
from trainer.data.dataset_files import read_meta, read_rows
from trainer.data.feedback_needed import blind_failed, select_feedback_needed, synthetic_items
from trainer.repair.curriculum import SOURCE

ROOT = Path(__file__).resolve().parents[3]
OWN1 = ROOT / "examples/adapters/qwen-coder-own-1/dataset"


def _outcome(item: str, arm: str, fixed: int) -> dict[str, Any]:
    return {"item": item, "arm": arm, "valid": True, "fixed": [0, fixed]}


def _setup(tmp_path: Path) -> tuple[dict[str, str], list[str], Path]:
    """Every context session of own-1 becomes an item; the report judges all but the last one,
    fixing even-numbered items blind (and every item with feedback)."""
    rows = read_rows(OWN1, "train")
    sessions = sorted({r["session_id"] for r in rows if r["context_turns"]})
    item_of = {sid: f"T/{i}#m0" for i, sid in enumerate(sessions)}
    items = list(item_of.values())
    outcomes = []
    for i, item in enumerate(items[:-1]):
        outcomes += [_outcome(item, "feedback", 1), _outcome(item, "blind", int(i % 2 == 0))]
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"kind": "repair", "adapter": "v1", "outcomes": outcomes}))
    return item_of, items, report


def test_keeps_only_contexts_the_blind_arm_left_broken(tmp_path: Path) -> None:
    item_of, items, report = _setup(tmp_path)
    meta = select_feedback_needed(OWN1, report, item_of, tmp_path / "out")
    source, kept = read_rows(OWN1, "train"), read_rows(tmp_path / "out", "train")
    broken = {item for i, item in enumerate(items[:-1]) if i % 2 == 1}
    expected = [r for r in source if r["context_turns"] and item_of[r["session_id"]] in broken]
    assert kept == expected and kept
    assert any(r["perturbed"] for r in kept), "perturbed twins of kept contexts stay"

    need = meta["feedback_needed"]
    assert need["items_blind_failed"] == len(broken) and need["items_judged"] == len(items) - 1
    assert need["kept"] + need["kept_perturbed"] == len(kept)
    assert need["dropped_first_turn"] == sum(not r["context_turns"] for r in source)
    assert need["dropped_not_in_report"] == sum(item_of.get(r["session_id"]) == items[-1] for r in source)
    assert sum(v for k, v in need.items() if k.startswith(("kept", "dropped"))) == len(source)
    assert need["dataset_hash"] == read_meta(OWN1)["data_hash"] and meta["counts"]["train_prompts"] == len(kept)
    assert read_rows(tmp_path / "out", "validation") == read_rows(OWN1, "validation")


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    item_of, items, report = _setup(tmp_path)
    with pytest.raises(UserError, match="no blind arm"):
        blind_failed({"kind": "repair", "outcomes": [_outcome(items[0], "feedback", 0)]})
    with pytest.raises(UserError, match="only train-split items"):
        blind_failed({"kind": "repair", "split": "test", "outcomes": [_outcome(items[0], "blind", 0)]})
    with pytest.raises(UserError, match="not a repair report"):
        blind_failed({"kind": "natural", "outcomes": []})
    all_fixed = tmp_path / "fixed.json"
    all_fixed.write_text(json.dumps({"kind": "repair", "outcomes": [_outcome(i, "blind", 1) for i in items]}))
    with pytest.raises(UserError, match="nothing to write"):
        select_feedback_needed(OWN1, all_fixed, item_of, tmp_path / "a")
    with pytest.raises(UserError, match="cannot read"):
        select_feedback_needed(OWN1, tmp_path / "missing.json", item_of, tmp_path / "b")
    with pytest.raises(UserError, match="not a built dataset"):
        select_feedback_needed(tmp_path, report, item_of, tmp_path / "c")


def test_items_come_from_the_synthetic_sessions_of_a_real_store(tmp_path: Path) -> None:
    """What the CLI reads: each synthetic session that names its item maps to it; sessions of
    another source, or without an item, map to nothing."""
    problem = add_problem()
    records = {
        "s-a": (SOURCE, {"item": "add#m0"}),
        "s-b": (SOURCE, {"item": "add#m1", "render": "served"}),
        "s-none": (SOURCE, {}),
        "c-a": ("collect", {"item": "add#m2"}),
    }
    with Store(tmp_path / "store.db") as store:
        for sid, (source, meta) in records.items():
            record = session(problem, [0.0, 1.0], sid, source=source)
            record.meta = meta
            store.insert_session(record)
        assert synthetic_items(store.sessions(source=SOURCE)) == {"s-a": "add#m0", "s-b": "add#m1"}
