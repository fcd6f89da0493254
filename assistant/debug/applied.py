"""Writing a fix into the user's tree, and taking it back: every applied change keeps a backup of
the file next to it and a line in `<data>/debug/applied.jsonl` (file, backup, sha256 of what was
written), so `cobalt debug --undo` restores the last one, and refuses when the file changed since.
In a git repository, a file with uncommitted changes is not written over unless forced.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from pathlib import Path

from assistant.debug.fix_file import backup_path
from assistant.errors import UserError

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


def apply_change(file: Path, text: str, journal_dir: Path, force: bool = False) -> Path:
    """Back `file` up (file.py.orig, .orig.1, ...), write `text`, log it; returns the backup."""
    if not force and git_dirty(file):
        raise UserError(
            f"{file} has uncommitted changes; commit or stash them first (or pass --force: a backup is kept "
            "and `cobalt debug --undo` restores it)"
        )
    backup = backup_path(file)
    shutil.copy2(file, backup)
    file.write_text(text, encoding="utf-8")
    journal_dir.mkdir(parents=True, exist_ok=True)
    entry = {"file": str(file.resolve()), "backup": str(backup.resolve()), "sha256": _sha(file), "at": time.time()}
    with open(journal_dir / JOURNAL, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")
    return backup


def _entries(journal_dir: Path) -> list[dict]:
    path = journal_dir / JOURNAL
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def undo_last(journal_dir: Path) -> str:
    """Restore the file of the last applied change that is not undone yet; one sentence back."""
    entries = _entries(journal_dir)
    undone = {e["undo"] for e in entries if "undo" in e}
    pending = [e for e in entries if "undo" not in e and e["backup"] not in undone]
    if not pending:
        raise UserError("there is no applied change to undo")
    last = pending[-1]
    file, backup = Path(last["file"]), Path(last["backup"])
    if not backup.exists():
        raise UserError(f"the backup {backup} is gone; {file} cannot be restored automatically")
    if file.exists() and _sha(file) != last["sha256"]:
        raise UserError(f"{file} changed since cobalt wrote it; restore it by hand from {backup}")
    shutil.copy2(backup, file)
    backup.unlink()
    with open(journal_dir / JOURNAL, "a", encoding="utf-8") as out:
        out.write(json.dumps({"undo": last["backup"], "at": time.time()}) + "\n")
    return f"restored {file} as it was before the fix"
