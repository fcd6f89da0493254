"""Keep the repair contexts that the served model cannot fix without their feedback
(`cobalt dataset feedback-needed`, issue 25: own feedback - blind).

A repair report of the served model on the items that the contexts were made from (`cobalt eval
-b humaneval-repair --split train`, both arms) says per item whether a blind re-ask, one that
shows no feedback, fixed the bug. Where it did, the bug shows in the program alone: a context of
that item rewards a changed program, whether or not the feedback was read. Those contexts are
dropped. Kept: the repair contexts (with their perturbed twins) of the items that the blind arm
left broken. First-turn prompts, and contexts of items that the report does not hold, are
dropped too. The validation rows and problems are kept as they are. The meta.json names the
source dataset and the report, with the counts.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping

from assistant.errors import UserError
from trainer.data import dataset_files


def synthetic_items(sessions: Iterable[Any]) -> dict[str, str]:
    """{session id: repair item id} of the synthetic sessions that name their item (meta `item`);
    `sessions` are SessionRecords, e.g. `store.sessions(source="synthetic")`."""
    return {s.id: str(s.meta["item"]) for s in sessions if s.meta.get("item")}


def blind_failed(report: Mapping[str, Any]) -> set[str]:
    """The items of a repair report whose blind arm ended without a fix at its last turn."""
    if report.get("kind") != "repair" or not report.get("outcomes"):
        raise UserError("the report is not a repair report with per-item outcomes (cobalt eval -b ...-repair)")
    blind = [o for o in report["outcomes"] if o.get("arm") == "blind" and o.get("valid", True)]
    if not blind:
        raise UserError("the repair report has no blind arm; rerun the evaluation without --no-blind")
    if report.get("split") in ("test", "val"):
        raise UserError(
            f"the repair report is of the {report['split']} split; only train-split items may choose training data"
        )
    return {o["item"] for o in blind if not o["fixed"][-1]}


def keep_rows(
    rows: list[dict[str, Any]], item_of: Mapping[str, str], keep: set[str], known: set[str]
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The rows to train on, and why the others went. `item_of` maps a row's session id to the
    repair item it was synthesized from; `known` is every item the report judged."""
    kept, counts = [], Counter[str]()
    for row in rows:
        item = item_of.get(row.get("session_id", ""))
        if not row.get("context_turns"):
            counts["dropped_first_turn"] += 1
        elif item is None or item not in known:
            counts["dropped_not_in_report"] += 1
        elif item not in keep:
            counts["dropped_blind_fixed"] += 1
        else:
            counts["kept_perturbed" if row.get("perturbed") else "kept"] += 1
            kept.append(row)
    return kept, counts


def select_feedback_needed(dataset: Path, report_path: Path, item_of: Mapping[str, str], out: Path) -> dict[str, Any]:
    """Write the kept rows of `dataset` under `out`; returns the written meta.json."""
    dataset_files.check_inputs([dataset], out)
    try:
        report = json.loads(report_path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the repair report {report_path}: {exc}") from exc
    keep = blind_failed(report)
    known = {o["item"] for o in report["outcomes"]}
    train, counts = keep_rows(dataset_files.read_rows(dataset, "train"), item_of, keep, known)
    if not train:
        raise UserError("no context of the dataset is one that the blind arm left broken; nothing to write")
    meta = dataset_files.read_meta(dataset)
    selected = {
        "feedback_needed": {
            "dataset": str(dataset),
            "dataset_hash": meta.get("data_hash"),
            "report": str(report_path),
            "report_adapter": report.get("adapter"),
            "items_blind_failed": len(keep),
            "items_judged": len(known),
            **dict(sorted(counts.items())),
        },
        "counts": {**meta.get("counts", {}), "train_prompts": len(train)},
        "prompt": meta.get("prompt"),
        "settings": meta.get("settings"),
    }
    validation = dataset_files.read_rows(dataset, "validation")
    return dataset_files.write(out, train, validation, dataset_files.validation_problems(dataset), selected)
