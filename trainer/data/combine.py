"""Combine built datasets into one (`cobalt dataset combine`): a recipe that trains on two
rounds' data at once (e.g. a shipped adapter's committed dataset and a later round's) stays a
dataset file + config + step count + seed.

From each input, `take` training rows are drawn without replacement by a seeded shuffle (all of
them when `take` is None), in input order; the validation rows and validation problems are the
union of the inputs' (a repeated row or problem is kept once). The meta.json records every
input's data hash and how many rows it gave, so the combined file names its sources. The
trainer's own sampler shuffles the result again: the order here does not matter.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Sequence

from assistant.errors import UserError
from trainer.data import dataset_files


def _key(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False)


def _union(groups: Sequence[list[Any]], key: Any) -> list[Any]:
    seen: set[str] = set()
    out = []
    for group in groups:
        for item in group:
            k = key(item)
            if k not in seen:
                seen.add(k)
                out.append(item)
    return out


def combine(inputs: Sequence[Path], out: Path, take: Sequence[int | None], seed: int = 0) -> dict[str, Any]:
    """Write the combined dataset under `out`; returns its meta.json."""
    if len(inputs) < 2:
        raise UserError("combine needs at least two datasets")
    if len(take) != len(inputs):
        raise UserError(f"--take names {len(take)} counts for {len(inputs)} datasets")
    inputs = [Path(p) for p in inputs]
    dataset_files.check_inputs(inputs, out)
    metas = [dataset_files.read_meta(path) for path in inputs]
    rng = random.Random(seed)
    train: list[dict[str, Any]] = []
    parts = []
    for path, meta, n in zip(inputs, metas, take):
        rows = dataset_files.read_rows(path, "train")
        if n is not None and not 0 < n <= len(rows):
            raise UserError(f"{path} has {len(rows)} training rows; cannot take {n}")
        chosen = sorted(rng.sample(range(len(rows)), n)) if n is not None else list(range(len(rows)))
        train += [rows[i] for i in chosen]
        parts.append(
            {"path": str(path), "data_hash": meta.get("data_hash"), "train_rows": len(rows), "taken": len(chosen)}
        )
    validation = _union([dataset_files.read_rows(p, "validation") for p in inputs], _key)
    problems = _union([dataset_files.validation_problems(p) for p in inputs], lambda p: p.content_hash())
    combined = {
        "combined": {"seed": seed, "parts": parts},
        "counts": {
            "train_prompts": len(train),
            "validation_prompts": len(validation),
            "validation_tasks": len(problems),
        },
        "prompt": metas[0].get("prompt"),
        "settings": metas[0].get("settings"),
    }
    return dataset_files.write(Path(out), train, validation, problems, combined)
