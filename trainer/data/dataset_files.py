"""The bandit dataset's files: how a built dataset is written and read back.

    <out>/train.jsonl, <out>/validation.jsonl      Hugging Face `datasets`-loadable rows
    <out>/validation_problems.jsonl                the validation tasks (for the gate)
    <out>/meta.json                                counts per filter, data hash, settings

Every file is replaced atomically; the data hash covers the train and validation rows.
`load_split(out, "train")` gives a `datasets.Dataset`; `datasets.load_dataset("json",
data_files=...)` reads the same files. What goes into the rows is `trainer.data.build`'s job.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Collection, Iterable

from assistant.errors import UserError
from assistant.problems.schema import Problem
from assistant.store import atomic

SPLITS = ("train", "validation")


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> bytes:
    blob = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode()
    atomic.write_bytes(path, blob)
    return blob


def write(
    out: Path,
    train: list[dict[str, Any]],
    validation: list[dict[str, Any]],
    validation_problems: list[Problem],
    meta: dict[str, Any],
) -> dict[str, Any]:
    """Write the dataset under `out`; returns `meta` as written, with its `data_hash`."""
    out.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    digest.update(_write_jsonl(out / "train.jsonl", train))
    digest.update(_write_jsonl(out / "validation.jsonl", validation))
    _write_jsonl(out / "validation_problems.jsonl", [p.to_dict() for p in validation_problems])
    meta = {"data_hash": digest.hexdigest(), **meta}
    atomic.write_json(out / "meta.json", meta)
    return meta


def check_inputs(paths: Iterable[Path], out: Path, keep: Collection[str] = ()) -> None:
    """One clear error unless every input is a built dataset and `out` is new, empty or holds only
    files named in `keep` (an interrupted run's own files)."""
    for path in paths:
        if not (Path(path) / "meta.json").is_file():
            raise UserError(f"{path} is not a built dataset (meta.json is missing)")
    out = Path(out)
    if out.exists() and (not out.is_dir() or {p.name for p in out.iterdir()} - set(keep)):
        raise UserError(f"{out} exists and is not empty; choose a new directory")


def read_meta(path: Path) -> dict[str, Any]:
    return json.loads((path / "meta.json").read_text())


def read_rows(path: Path, split: str) -> list[dict[str, Any]]:
    file = path / f"{split}.jsonl"
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_split(path: Path, split: str = "train") -> Any:
    """One split as a `datasets.Dataset`, with every column any row has (`Dataset.from_list` takes
    the first row's keys only: a combined dataset whose first part has no `guide` or
    `edit_format` column would lose the other parts' values without a word); a row without one
    gets None there."""
    from datasets import Dataset

    rows = read_rows(path, split)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    return Dataset.from_list([{key: row.get(key) for key in columns} for row in rows])


def validation_problems(path: Path) -> list[Problem]:
    lines = (path / "validation_problems.jsonl").read_text(encoding="utf-8").splitlines()
    return [Problem.from_dict(json.loads(line), "validation", check_paths=False) for line in lines if line.strip()]
