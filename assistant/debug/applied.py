"""Writing a fix into the user's tree, and taking it back: every applied change keeps a backup of
the file next to it and a line in `<data>/debug/applied.jsonl` (file, backup, sha256 of what was
written), so `cobalt debug --undo` restores the last one, and refuses when the file changed since.
In a git repository, a file with uncommitted changes is not written over unless forced; nor is a
file that changed since the fix was made from it. The fix keeps the file's line endings and
byte-order mark, and replaces the file whole (a temporary file renamed over it), so a crash or a
full disk never leaves it half written.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from assistant.debug.fix_file import backup_path, read_text
from assistant.debug.line_endings import with_endings
from assistant.errors import UserError
from assistant.store.jsonl_log import append_row, read_rows

JOURNAL = "applied.jsonl"


def journal_dir(data_dir: Path) -> Path:
    """Where the applied changes of `cobalt debug` (CLI and TUI) are logged."""
    return Path(data_dir) / "debug"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def git_dirty(file: Path) -> bool:
    """True when `file` is in a git work tree and has uncommitted changes (False without git)."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--", file.name],
            cwd=file.parent,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and bool(out.stdout.strip()) and not out.stdout.startswith("??")


def encoded(text: str, like: bytes) -> bytes:
    """`text` (newlines as `\\n`) as bytes in the form of the file `like` was read from: each
    line's own ending (`line_endings`) and its UTF-8 byte-order mark."""
    bom = codecs.BOM_UTF8 if like.startswith(codecs.BOM_UTF8) else b""
    return bom + with_endings(text, like[len(bom) :].decode("utf-8", errors="replace")).encode("utf-8")


def _replace(file: Path, data: bytes) -> None:
    """Write `data` as `file` whole: a temporary file beside it, flushed, renamed over it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".cobalt", dir=file.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        shutil.copymode(file, tmp)
        os.replace(tmp, file)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class DirtyFile(UserError):
    """The file has uncommitted git changes (the TUI asks; the CLI wants --force)."""


def apply_change(
    file: Path,
    text: str,
    journal_dir: Path,
    force: bool = False,
    original: str | None = None,
    dirty_ok: bool = False,
) -> Path:
    """Back `file` up (file.py.orig, .orig.1, ...), write `text`, log it; returns the backup.
    `original`: the text the fix was made from; the file is not written when it reads otherwise now.
    `force` lifts both checks; `dirty_ok` only the one for uncommitted git changes (the person said
    yes to writing over them), never the one for a file changed since the fix was made."""
    if not (force or dirty_ok) and git_dirty(file):
        raise DirtyFile(
            f"{file} has uncommitted changes; commit or stash them first (or pass --force: a backup is kept "
            "and `cobalt debug --undo` restores it)"
        )
    raw = file.read_bytes()
    if original is not None and not force and read_text(raw) != original:
        raise UserError(
            f"{file} changed since cobalt read it, so the fix (made from the old text) was not written; "
            "run cobalt debug on it again"
        )
    backup = backup_path(file)
    shutil.copy2(file, backup)
    data = encoded(text, raw)
    journal_dir.mkdir(parents=True, exist_ok=True)
    entry = {
        "file": str(file.resolve()),
        "backup": str(backup.resolve()),
        "sha256": hashlib.sha256(data).hexdigest(),
        "at": time.time(),
    }
    try:
        _replace(file.resolve(), data)  # a link's target, as writing through the link would
    except OSError as exc:
        raise UserError(f"{file} could not be written ({exc.strerror or exc}); it is unchanged") from None
    append_row(journal_dir / JOURNAL, entry)
    return backup


def _pending(entries: list[dict]) -> list[dict]:
    """The applied changes not undone, replayed in order: an undo takes back the latest change
    with its backup (a backup's name is used again once its undo removed it)."""
    pending: list[dict] = []
    for e in entries:
        if "undo" not in e:
            pending.append(e)
            continue
        for i in range(len(pending) - 1, -1, -1):
            if pending[i]["backup"] == e["undo"]:
                del pending[i]
                break
    return pending


def undo_last(journal_dir: Path, file: Path | None = None) -> str:
    """Restore the file of the last applied change that is not undone yet (of `file` only, when
    given: a TUI debug session undoes its own file's fix, never another's); one sentence back."""
    pending = _pending(read_rows(journal_dir / JOURNAL))
    if file is not None:
        pending = [e for e in pending if e["file"] == str(Path(file).resolve())]
    if not pending:
        raise UserError(f"there is no applied change{f' to {file}' if file is not None else ''} to undo")
    last = pending[-1]
    file, backup = Path(last["file"]), Path(last["backup"])
    if not backup.exists():
        raise UserError(f"the backup {backup} is gone; {file} cannot be restored automatically")
    if file.exists() and _sha(file) != last["sha256"]:
        raise UserError(f"{file} changed since cobalt wrote it; restore it by hand from {backup}")
    shutil.copy2(backup, file)
    backup.unlink()
    append_row(journal_dir / JOURNAL, {"undo": last["backup"], "at": time.time()})
    return f"restored {file} as it was before the fix"
