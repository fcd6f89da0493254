"""The one rule for the best turn of a debug session (`fix_file.best_turn`), as the session, the
CLI's report and the TUI's ctrl+a use it."""

from __future__ import annotations

from assistant.debug.fix_file import best_turn, unified_diff
from assistant.store.trajectory import Turn
from sandbox.api import RunResult, TestResult

COMMAND = "python -m pytest -q"


def _run(passed: int, failed: int) -> RunResult:
    return RunResult(tests=[TestResult("passed")] * passed + [TestResult("failed")] * failed)


def _turn(index: int, run: RunResult | None, program: str | None = "code") -> Turn:
    return Turn(index, [], "", program, "", "", public=run)


def test_the_earliest_turn_with_the_most_passing_tests() -> None:
    turns = [_turn(0, _run(1, 2)), _turn(1, _run(2, 1)), _turn(2, _run(2, 1)), _turn(3, _run(0, 3))]
    assert best_turn(turns) is turns[1]


def test_a_turn_must_pass_more_than_the_users_file() -> None:
    turns = [_turn(0, _run(1, 2)), _turn(1, _run(1, 2))]
    assert best_turn(turns, _run(1, 2)) is None
    assert best_turn(turns, _run(0, 3)) is turns[0]


def test_no_edit_or_a_command_that_tested_nothing_does_not_count() -> None:
    crashed = RunResult(tests=[TestResult("error", name=COMMAND, exit_code=4, detail="usage error")])
    turns = [_turn(0, _run(3, 0), program=None), _turn(1, crashed), _turn(2, _run(1, 2))]
    assert best_turn(turns, _run(0, 3), COMMAND) is turns[2]
    assert best_turn(turns[1:2], None, COMMAND) is None
    assert best_turn(turns[1:2]) is turns[1]  # without the command, its one result counts as a test run


def test_the_diff_splits_lines_where_python_does() -> None:
    """A form feed inside a line (a page break in an old module) is not a line of its own."""
    before = "x = 1\n\x0cy = 2\n"
    diff = unified_diff(before, before.replace("y = 2", "y = 3"), "m.py")
    assert diff.splitlines(keepends=False)[:2] == ["--- a/m.py", "+++ b/m.py"]
    assert "-\x0cy = 2\n" in diff and "+\x0cy = 3\n" in diff
    assert unified_diff(before, before, "m.py") == ""
