"""Spectrum-based localization: the sandbox's pytest plugin reports which functions of the target
file each test ran, and Ochiai ranks the function the failing tests run most and the passing ones
least first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.debug.debug_session import LimitedRunner
from assistant.debug.fix_file import debug_problem
from assistant.debug.localize import spans
from assistant.debug.spectrum import ranked
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


def _test(passed: bool, calls: list[int] | None) -> TestResult:
    return TestResult(status="passed" if passed else "failed", calls=calls)


def test_rendering_methods_come_last_as_pytest_runs_them_for_every_failure() -> None:
    tests = [_test(False, [1, 10]), _test(False, [1, 5, 10]), _test(True, [1, 5])]
    assert [s.qualname for s in ranked(spans(SOURCE), tests)] == ["mul", "double", "P.__repr__"]


def test_no_ranking_without_calls_or_without_a_failing_test() -> None:
    assert ranked(spans(SOURCE), [_test(False, None), _test(True, None)]) == []
    assert ranked(spans(SOURCE), [_test(True, [1, 5])]) == []
    assert ranked(spans(SOURCE), [_test(False, [])]) == []  # a failing test that ran nothing of the file
