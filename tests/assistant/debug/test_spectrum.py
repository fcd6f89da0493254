"""Spectrum-based localization: the sandbox's pytest plugin reports which functions of the target
file each test ran, and Ochiai ranks the function the failing tests run most and the passing ones
least first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.debug.debug_session import DebugSession
from assistant.debug.fix_file import debug_problem
from assistant.debug.localize import spans
from assistant.debug.open_session import open_debug_session
from assistant.debug.project_runs import LimitedRunner
from assistant.debug.spectrum import ranked, ranked_by_lines, ranked_lines
from assistant.settings import DebugSettings
from sandbox.api import Limits, TestResult
from tests.assistant.debug.projects import DOUBLE, DOUBLE_TESTS, calc_project

SOURCE = (
    "def mul(a, b):\n    return a + b\n\n\ndef double(a):\n    return mul(a, 2)\n\n\n"
    "class P:\n    def __repr__(self):\n        return 'P'\n"
)


@pytest.mark.docker
def test_each_test_reports_the_target_functions_it_ran_and_the_culprit_ranks_first(
    tmp_path: Path, sandbox: Any
) -> None:
    project = calc_project(tmp_path / "calc", DOUBLE, DOUBLE_TESTS)
    problem = debug_problem(project / "calc.py", "python -m pytest -q", project)
    runner = LimitedRunner.of(sandbox, Limits(timeout_s=30), DebugSettings())
    run = runner.run(problem.starter_code, [], "pytest", project=problem.project())
    calls = {t.name: t.calls for t in run.tests}
    assert calls == {"tests/test_calc.py::test_mul": [1], "tests/test_calc.py::test_double": [1, 5],
                     "tests/test_calc.py::test_zero": [1]}  # fmt: skip
    # mul: 2 failing of 2, 1 passing (0.82); double: 1 failing, 0 passing (0.71)
    assert [s.qualname for s in ranked(spans(problem.starter_code), run.tests)] == ["mul", "double"]
    lines = {t.name: t.lines for t in run.tests}
    assert lines == {"tests/test_calc.py::test_mul": [1, 2], "tests/test_calc.py::test_double": [1, 2, 5, 6],
                     "tests/test_calc.py::test_zero": [1, 2]}  # fmt: skip
    # line 2 (and 1): 2 failing, 1 passing; lines 5-6: 1 failing, 0 passing; ties: fewer passing, then earlier
    assert ranked_lines(spans(problem.starter_code), run.tests) == [1, 2, 5, 6]


def _test(passed: bool, calls: list[int] | None) -> TestResult:
    return TestResult(status="passed" if passed else "failed", calls=calls)


def test_rendering_methods_come_last_as_pytest_runs_them_for_every_failure() -> None:
    tests = [_test(False, [1, 10]), _test(False, [1, 5, 10]), _test(True, [1, 5])]
    assert [s.qualname for s in ranked(spans(SOURCE), tests)] == ["mul", "double", "P.__repr__"]


def test_tied_functions_rank_in_file_order_whatever_the_string_hashing() -> None:
    """Six functions every test runs tie on every score; a set's order (hashed qualnames) would
    put them in file order once in 720 processes."""
    source = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(6))
    ran = [1 + 4 * i for i in range(6)]
    tests = [_test(False, ran), _test(True, ran)]
    assert [s.qualname for s in ranked(spans(source), tests)] == [f"f{i}" for i in range(6)]


def test_lines_rank_by_ochiai_and_never_inside_rendering_methods() -> None:
    def lines(passed: bool, ran: list[int] | None) -> TestResult:
        return TestResult(status="passed" if passed else "failed", lines=ran)

    tests = [lines(False, [1, 2, 11]), lines(False, [1, 2, 5, 6, 11]), lines(True, [1, 2, 5, 6])]
    # 1-2: 2 failing, 1 passing (0.82); 5-6: 1 failing, 1 passing (0.5); 11 (__repr__) never
    assert ranked_lines(spans(SOURCE), tests) == [1, 2, 5, 6]
    assert ranked_lines(spans(SOURCE), [lines(False, None), lines(True, [1])]) == []
    assert ranked_lines(spans(SOURCE), [lines(True, [1, 2])]) == []


EQ_SOURCE = (
    "class D:\n    def __init__(self, n):\n        self.n = n + 1\n\n"
    "    def __eq__(self, other):\n        if self.n != other.n:\n            return False\n        return True\n"
)


def test_an_eq_run_by_the_failing_asserts_is_named_second_not_first() -> None:
    """`assert D(1) == D(2)`-style failures run `__eq__`'s False branch (lines 6-7) only in failing
    tests; the wrong line (3) ran in a passing one too, so by lines alone `__eq__` would lead."""

    def lines(passed: bool, ran: list[int]) -> TestResult:
        return TestResult(status="passed" if passed else "failed", lines=ran)

    tests = [lines(False, [3, 6, 7]), lines(False, [3, 6, 7]), lines(True, [3, 6, 8])]
    assert ranked_lines(spans(EQ_SOURCE), tests)[:2] == [7, 3]
    assert [s.qualname for s in ranked_by_lines(spans(EQ_SOURCE), tests)] == ["D.__init__", "D.__eq__"]
    alone = [lines(False, [6, 7]), lines(True, [6, 8])]  # the only function ran: it stays first
    assert [s.qualname for s in ranked_by_lines(spans(EQ_SOURCE), alone)] == ["D.__eq__"]


def test_no_ranking_without_calls_or_without_a_failing_test() -> None:
    assert ranked(spans(SOURCE), [_test(False, None), _test(True, None)]) == []
    assert ranked(spans(SOURCE), [_test(True, [1, 5])]) == []
    assert ranked(spans(SOURCE), [_test(False, [])]) == []  # a failing test that ran nothing of the file


HELPER_BUG = (
    "def _index(i, n):\n    if i < 0:\n        return n + i + 1\n    return i\n\n\n"
    "def get(items, i):\n    j = _index(i, len(items))\n    return items[j]\n"
)
HELPER_TESTS = (
    "from calc import get\n\ndef test_first():\n    assert get([1, 2, 3], 0) == 1\n\n"
    "def test_last():\n    assert get([1, 2, 3], -1) == 3\n"
)


@pytest.mark.docker
def test_the_prompt_names_the_function_of_the_most_suspicious_line_not_the_failing_frame(
    tmp_path: Path, sandbox: Any, test_config: Any
) -> None:
    """The IndexError surfaces in `get` (the only frame in the file); the wrong line is in `_index`,
    which returned: only the failing test ran it. `localize: lines` names `_index`, `frames` `get`."""
    project = calc_project(tmp_path / "calc", HELPER_BUG, HELPER_TESTS)
    problem = debug_problem(project / "calc.py", "python -m pytest -q", project)
    runner = LimitedRunner.of(sandbox, Limits(timeout_s=30), DebugSettings())
    run = runner.run(problem.starter_code, [], "pytest", project=problem.project())
    assert [s.qualname for s in ranked_by_lines(spans(problem.starter_code), run.tests)] == ["_index", "get"]
    focus = {}
    for how in ("lines", "frames"):
        debug = test_config.debug.model_copy(update={"localize": how})
        session = open_debug_session(problem, None, runner, test_config, run, debug=debug, source="bench", stream=False)
        assert isinstance(session, DebugSession)
        focus[how] = [s.qualname for s in session.implicated_spans()]
        assert f"most likely in `{focus[how][0]}`" in session.context()[-1]["content"]
    assert focus == {"lines": ["_index", "get"], "frames": ["get", "_index"]}
