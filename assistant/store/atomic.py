"""Atomic writes: a file or a directory appears whole at its final path or not at all.

A file is written to a temporary sibling, flushed and fsynced, then renamed over the
target (`os.replace`), and the directory entry is fsynced, so a crash leaves either the
old or the new content. A directory is built under a staging name and renamed into place
by `replace_dir`; `building` holds the one lock under which such a directory is staged, so two
processes building the same one (two `make run`s preparing a model) wait for each other instead of
deleting each other's staging directory. Used by the model cache, the server state file, the adapter registry,
the retraining runs, the training output and the dataset files; it decides nothing about
what is written.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator


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
    """Move the finished directory `staging` to `final`, replacing whatever was there: the old one
    is renamed aside first and removed only once the new one is in place, so a crash or Ctrl-C
    leaves one whole directory at `final` (or none, with the old one beside it), never half of one."""
    final = Path(final)
    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    shutil.rmtree(old, ignore_errors=True)  # one a dead process of this pid left
    if final.exists():
        os.replace(final, old)
    os.replace(staging, final)
    _fsync_dir(final.parent)
    shutil.rmtree(old, ignore_errors=True)


@contextmanager
def building(final: Path, progress: Callable[[str], None] = print) -> Iterator[Path]:
    """Held while the directory `final` is built: an exclusive lock (flock on
    `<parent>/.<name>.lock`, freed by the kernel when its holder dies; a second builder says it
    waits, then waits), the staging directories dead builders left removed, and a fresh empty
    `<name>.partial-<pid>` yielded, to be filled and moved into place with `replace_dir`. The
    caller checks inside the block whether another process finished `final` meanwhile; the staging
    directory is removed if the block leaves it behind."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    waiting = f"{final.name}: another process is building it; waiting for it to finish ..."
    with exclusive(final.parent / f".{final.name}.lock", lambda: progress(waiting)):
        for stale in [*final.parent.glob(f"{final.name}.partial-*"), *final.parent.glob(f".{final.name}.old-*")]:
            shutil.rmtree(stale, ignore_errors=True)
        staging = final.parent / f"{final.name}.partial-{os.getpid()}"
        staging.mkdir()
        try:
            yield staging
        finally:
            shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def exclusive(lock_path: Path, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Held while the block runs: an exclusive flock on `lock_path` (created with its folder),
    freed by the kernel when the holder dies; `on_wait` is called once if another process (or
    another open of the file) holds it, and then the block waits for it."""
    Path(lock_path).parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
