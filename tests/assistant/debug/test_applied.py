"""Writing a fix into the user's file and taking it back: the file's own line endings and BOM
kept, never written over a change made after the fix was read, never half written, and every
applied change undoable in turn (a backup name used again after its undo included)."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from assistant.debug import applied
from assistant.debug.applied import apply_change, undo_last
from assistant.debug.fix_file import read_text
from assistant.errors import UserError


def _file(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "proj" / "calc.py"
    path.parent.mkdir()
    path.write_bytes(data)
    return path


def test_a_crlf_file_with_a_bom_keeps_both_and_the_undo_restores_its_bytes(tmp_path: Path) -> None:
    before = codecs.BOM_UTF8 + b"def f(x):\r\n    return x - 1\r\n"
    file = _file(tmp_path, before)
    original = read_text(before)
    assert original == "def f(x):\n    return x - 1\n"
    backup = apply_change(file, original.replace("- 1", "+ 1"), tmp_path / "j", original=original)
    assert file.read_bytes() == codecs.BOM_UTF8 + b"def f(x):\r\n    return x + 1\r\n"
    assert backup.read_bytes() == before
    assert undo_last(tmp_path / "j").startswith("restored")
    assert file.read_bytes() == before and not backup.exists()


def test_a_file_changed_since_the_fix_was_read_is_not_written_unless_forced(tmp_path: Path) -> None:
    file = _file(tmp_path, b"x = 1\n")
    file.write_text("x = 2  # the user's own change meanwhile\n")
    with pytest.raises(UserError, match="changed since cobalt read it"):
        apply_change(file, "x = 3\n", tmp_path / "j", original="x = 1\n")
    assert file.read_text() == "x = 2  # the user's own change meanwhile\n"
    assert list(file.parent.iterdir()) == [file]  # no backup, nothing logged
    apply_change(file, "x = 3\n", tmp_path / "j", force=True, original="x = 1\n")
    assert file.read_text() == "x = 3\n"


def test_apply_undo_apply_undo_restores_each_time(tmp_path: Path) -> None:
    file = _file(tmp_path, b"v = 0\n")
    journal = tmp_path / "j"
    apply_change(file, "v = 1\n", journal, original="v = 0\n")
    undo_last(journal)
    apply_change(file, "v = 2\n", journal, original="v = 0\n")  # the same backup name as the first
    assert file.read_text() == "v = 2\n"
    undo_last(journal)
    assert file.read_text() == "v = 0\n"
    with pytest.raises(UserError, match="no applied change to undo"):
        undo_last(journal)


def test_a_failed_write_leaves_the_file_whole_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = _file(tmp_path, b"a = 1\n")

    def full_disk(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(applied.os, "replace", full_disk)
    with pytest.raises(UserError, match="could not be written .No space left on device.; it is unchanged"):
        apply_change(file, "a = 2\n", tmp_path / "j", original="a = 1\n")
    assert file.read_text() == "a = 1\n"
    assert not [p for p in file.parent.iterdir() if p.name.endswith(".cobalt")]  # no temporary file left
    assert not (tmp_path / "j" / applied.JOURNAL).exists()


def test_a_torn_journal_line_is_skipped(tmp_path: Path) -> None:
    file = _file(tmp_path, b"b = 1\n")
    journal = tmp_path / "j"
    apply_change(file, "b = 2\n", journal)
    with open(journal / applied.JOURNAL, "a") as out:
        out.write('{"undo": "/x/cal')  # a crash mid-write
    assert undo_last(journal).startswith("restored") and file.read_text() == "b = 1\n"


def test_the_written_file_keeps_its_mode(tmp_path: Path) -> None:
    file = _file(tmp_path, b"c = 1\n")
    os.chmod(file, 0o640)
    apply_change(file, "c = 2\n", tmp_path / "j")
    assert file.stat().st_mode & 0o777 == 0o640


def test_an_undo_of_one_file_leaves_another_files_later_fix(tmp_path: Path) -> None:
    journal = tmp_path / "j"
    first = _file(tmp_path, b"a = 1\n")
    (tmp_path / "other").mkdir()
    second = tmp_path / "other" / "b.py"
    second.write_text("b = 1\n")
    apply_change(first, "a = 2\n", journal)
    apply_change(second, "b = 2\n", journal)  # the latest fix is the other file's
    assert undo_last(journal, first) == f"restored {first} as it was before the fix"
    assert (first.read_text(), second.read_text()) == ("a = 1\n", "b = 2\n")
    with pytest.raises(UserError, match=f"no applied change to {first} to undo"):
        undo_last(journal, first)


def test_a_linked_file_is_written_through_its_link(tmp_path: Path) -> None:
    target = _file(tmp_path, b"d = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    apply_change(link, "d = 2\n", tmp_path / "j", original="d = 1\n")
    assert link.is_symlink() and target.read_text() == "d = 2\n"


def test_a_file_mixing_line_endings_changes_only_where_the_fix_did(tmp_path: Path) -> None:
    before = b"def f(x):\r\n    y = x - 1\n    return y\r\n"
    file = _file(tmp_path, before)
    original = read_text(before)
    apply_change(file, original.replace("- 1", "+ 1"), tmp_path / "j", original=original)
    assert file.read_bytes() == before.replace(b"- 1", b"+ 1")  # the LF line stays LF, the CRLF ones CRLF
