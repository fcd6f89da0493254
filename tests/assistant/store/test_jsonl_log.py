"""The crash-proof JSON-lines log: rows in order, torn lines skipped, a row after a torn line kept."""

from __future__ import annotations

from pathlib import Path

from assistant.store.jsonl_log import append_row, read_rows


def test_rows_come_back_in_order_and_a_missing_log_is_empty(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    assert read_rows(log) == []
    append_row(log, {"a": 1})
    append_row(log, {"a": 2}, sync=True)
    assert read_rows(log) == [{"a": 1}, {"a": 2}]


def test_a_row_appended_after_a_torn_line_is_kept_and_the_torn_line_skipped(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    append_row(log, {"a": 1})
    with open(log, "a") as fh:
        fh.write('{"a": 2, "b"')  # a crash mid-write
    append_row(log, {"a": 3})
    assert read_rows(log) == [{"a": 1}, {"a": 3}]
    assert log.read_text().endswith('"b"\n{"a": 3}\n')
