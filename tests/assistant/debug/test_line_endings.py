"""A fix written back keeps each line's own ending: a file mixing CRLF, LF and CR lines changes
only where the fix changed it, new lines take their neighbour's ending, and a file with one kind of
ending (or a last line without one) comes back the same way."""

from __future__ import annotations

from assistant.debug.fix_file import read_text
from assistant.debug.line_endings import split_endings, with_endings


def _fix(raw: str, old: str, new: str) -> str:
    return with_endings(read_text(raw.encode()).replace(old, new), raw)


def test_split_endings_keeps_every_kind_and_an_open_last_line() -> None:
    assert split_endings("a\r\nb\rc\nd") == [("a", "\r\n"), ("b", "\r"), ("c", "\n"), ("d", "")]
    assert split_endings("a\n\n") == [("a", "\n"), ("", "\n")]
    assert split_endings("") == []


def test_a_mixed_file_changes_only_on_the_edited_lines() -> None:
    raw = "def f(x):\r\n    y = x - 1\n    return y\r\n\r\nz = 2\n"
    assert _fix(raw, "x - 1", "x + 1") == "def f(x):\r\n    y = x + 1\n    return y\r\n\r\nz = 2\n"


def test_inserted_lines_take_the_ending_of_the_line_before() -> None:
    raw = "a = 1\r\nb = 2\nc = 3\r\n"
    assert _fix(raw, "b = 2\n", "b = 2\nb2 = 4\n") == "a = 1\r\nb = 2\nb2 = 4\nc = 3\r\n"
    assert _fix(raw, "b = 2\n", "") == "a = 1\r\nc = 3\r\n"  # a removed line takes its ending along


def test_one_kind_of_ending_holds_for_every_line() -> None:
    assert _fix("a\r\nb\r\n", "a", "a\nc") == "a\r\nc\r\nb\r\n"
    assert _fix("a\rb\r", "b", "B") == "a\rB\r"
    assert _fix("a\nb", "b", "B") == "a\nB"  # no ending after the last line: none added


def test_a_last_line_that_gains_an_ending_takes_the_files_commonest() -> None:
    raw = "a\r\nb\nc\r\nd"
    assert with_endings(read_text(raw.encode()) + "\n", raw) == "a\r\nb\nc\r\nd\r\n"
