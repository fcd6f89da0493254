"""Append-only JSON-lines logs that a crash cannot spoil: `append_row` starts a row on a line of
its own even after a write cut short, `read_rows` skips such torn lines. Used by the training's
step log, the applied-fix journal of `cobalt debug` and the adapter registry's history."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def append_row(path: Path, row: dict[str, Any], sync: bool = False) -> None:
    """Append `row` as one line; a torn last line (no newline) is ended first. `sync`: on disk
    before this returns."""
    with open(path, "a+b") as fh:
        end = fh.seek(0, 2)
        torn = False
        if end:
            fh.seek(end - 1)
            torn = fh.read(1) != b"\n"
        fh.write((b"\n" if torn else b"") + json.dumps(row).encode("utf-8") + b"\n")
        if sync:
            fh.flush()
            os.fsync(fh.fileno())


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of the log at `path` in order ([] when missing), skipping torn or empty lines."""
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows
