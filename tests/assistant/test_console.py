"""The session progress bar writes to stderr only: a command's `--json` result is stdout's whole text."""

from __future__ import annotations

import json

import pytest

from assistant.console import print_result, session_progress


def test_session_progress_leaves_stdout_to_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    for hidden in (True, False):
        with session_progress("collect", disable=hidden) as (on_plan, on_session):
            on_plan(3, 2)  # the line a rerun prints about the sessions it reuses
        print_result(True, {"planned": 3}, str)
        captured = capsys.readouterr()
        assert json.loads(captured.out) == {"planned": 3}
        assert "2 session(s) already stored; 3 to run" in captured.err
