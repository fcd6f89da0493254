"""The project's test command as `cobalt debug` runs it: the whole run's limit and each test's own
(`LimitedRunner`), the first run on the file as given (`baseline_run`), and a run that followed every
project file seen as if it had followed one (`for_file`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from assistant.debug import failures as fails
from assistant.errors import UserError
from assistant.interfaces import Runner
from assistant.problems.schema import Problem
from assistant.settings import DebugSettings
from sandbox.api import Limits, RunResult


class LimitedRunner:
    """A sandbox whose every run has the debug command's whole-run limit (debug.test_timeout_s)
    and each test its own (debug.per_test_timeout_s): a test that hangs fails where it hangs."""

    def __init__(self, sandbox: Runner, limits: Limits, per_test_s: float = 0.0) -> None:
        self.sandbox, self.limits, self.per_test_s = sandbox, limits, per_test_s

    @classmethod
    def of(cls, sandbox: Runner, limits: Limits, debug: DebugSettings) -> "LimitedRunner":
        return cls(sandbox, Limits(**{**vars(limits), "timeout_s": debug.test_timeout_s}), debug.per_test_timeout_s)

    def run(self, program: str, tests: list, kind: str, limits: Any = None, project: Any = None) -> RunResult:
        if project is not None and self.per_test_s and not project.test_timeout_s:
            project = replace(project, test_timeout_s=self.per_test_s)
        return self.sandbox.run(program, tests, kind, limits=limits or self.limits, project=project)  # type: ignore[call-arg]


def baseline_run(runner: Runner, problem: Problem, follow: str = "") -> RunResult:
    """The project's test command on the file as given; UserError (one sentence) when it tests
    nothing. `follow` "*": each test reports the lines it ran of every project file (`for_file`)."""
    project = problem.project()
    if project is not None and follow:
        project = replace(project, follow=follow)
    result = runner.run(problem.starter_code, [], "pytest", project=project)  # type: ignore[call-arg]
    error = fails.run_error(result, str(problem.test_command))
    if error is not None:
        raise UserError(error)
    return result


def for_file(run: RunResult, path: str) -> RunResult:
    """A run that followed every project file (`baseline_run(..., follow="*")`) as if it had
    followed only `path`: each test's calls and lines in that file."""
    tests = []
    for test in run.tests:
        found = (test.files or {}).get(path, {})
        tests.append(replace(test, calls=found.get("calls", []), lines=found.get("lines", []), files=None))
    return replace(run, tests=tests)
