"""Guides for a built dataset (issue 25, `cobalt dataset guide`): each training row gets a
`guide`, its task's reference program written as the served model writes a reply
(`trainer.repair.served_form.served_reply`: one python block, no docstring, no comment), which
`guide_anchor` training puts in the row's group as one completion (trainer/training/guide_anchor.py).

References come from the train split only (`train_references`: HumanEval's canonical
solutions, and the references of a set with sources in the natural layout); a row whose task has
none (a val or test task, a task of another set) gets an empty guide, so a held-out task's
solution never reaches training. Validation rows never get one; with `origins`, only the training
rows of those mix parts do (`synthetic`, `own`; 1.5b-own-3 guided the seeded-bugs half alone,
docs/experiments/2026-12-01-1.5b-own-3.md). The dataset is copied to a new
directory with its meta extended (`guided_from`: the input's data hash, and the counts); the
input is not changed. This module writes files only; it never runs programs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Collection, Mapping

from assistant.interfaces import Rule
from trainer.data.dataset_files import check_inputs, read_meta, read_rows, validation_problems, write
from trainer.repair.curriculum import train_pairs
from trainer.repair.items import humaneval_sources
from trainer.repair.served_form import served_reply


def train_references(sets: list[Path], rule: Rule) -> dict[str, str]:
    """{task id: reference program} of the train split of HumanEval and of each set with
    references in `sets`."""
    out = {p.id: program for p, program in humaneval_sources("train", rule)}
    for directory in sets:
        out.update({p.id: program for p, program in train_pairs(directory, rule)})
    return out


def add_guides(
    dataset: Path, out: Path, references: Mapping[str, str], origins: Collection[str] | None = None
) -> dict[str, Any]:
    """Write `dataset` with guides to `out` (new or empty); returns the written meta. With
    `origins`, training rows of another `origin` get an empty guide (counted as `other_origin`)."""
    check_inputs([dataset], out)
    source = read_meta(dataset)
    meta = {k: v for k, v in source.items() if k != "data_hash"}
    train, validation = read_rows(dataset, "train"), read_rows(dataset, "validation")
    counts = {"rows": len(train), "guided": 0, "no_reference": 0, "other_origin": 0}
    for row in train:
        if origins is not None and row.get("origin") not in origins:
            row["guide"] = ""
            counts["other_origin"] += 1
            continue
        program = references.get(str(row.get("task_id", "")), "")
        row["guide"] = served_reply(program) if program.strip() else ""
        counts["guided" if row["guide"] else "no_reference"] += 1
    for row in validation:
        row["guide"] = ""
    origins_kept = sorted(origins) if origins is not None else None
    meta.update({"guided_from": source["data_hash"], "guides": counts, "guided_origins": origins_kept})
    return write(out, train, validation, validation_problems(dataset), meta)
