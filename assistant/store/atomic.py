"""Atomic writes: a file or a directory appears whole at its final path or not at all.

A file is written to a temporary sibling, flushed and fsynced, then renamed over the
target (`os.replace`), and the directory entry is fsynced, so a crash leaves either the
old or the new content. A directory is built under a staging name and renamed into place
by `replace_dir`. Used by the model cache, the server state file, the adapter registry,
the retraining runs, the training output and the dataset files; it decides nothing about
what is written.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any


def write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, data: Any) -> None:
    """`data` as indented JSON with sorted keys (values JSON lacks are written as strings)."""
    write_text(path, json.dumps(data, indent=2, sort_keys=True, default=str))


def replace_dir(staging: Path, final: Path) -> None:
    """Move the finished directory `staging` to `final`, replacing whatever was there."""
    if Path(final).exists():
        shutil.rmtree(final)
    os.replace(staging, final)
    _fsync_dir(Path(final).parent)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
