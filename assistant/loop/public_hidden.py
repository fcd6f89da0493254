"""One program's run on a problem's tests, split into what the model may see and what it may not:
the public and hidden tests run together once (so a program cannot tell them apart), and the
results come back as two halves. A sandbox fault raises; the loop turns it into a session status."""

from __future__ import annotations

from typing import Any

from assistant.interfaces import Runner
from assistant.loop.sanitize import graded_program
from assistant.problems.schema import Problem
from sandbox.api import RunResult, SandboxError, TestCase


def run_public_and_hidden(
    sandbox: Runner, problem: Problem, program: str, sanitize: bool = True
) -> tuple[RunResult, RunResult]:
    """Run `program` once on public + hidden tests; return (public, hidden) results. With
    `sanitize`, a function answer runs without the module-level code the model added around it
    (`assistant.loop.sanitize`). Raises SandboxError when the sandbox itself failed."""
    program = graded_program(program, problem.kind, sanitize)
    if problem.kind == "pytest":
        result = sandbox.run(program, problem.public_tests, "pytest", project=problem.project())
        _check(result)
        return result, result
    union = problem.all_tests()
    result = sandbox.run(program, union, problem.kind)
    _check(result)
    marks = {"tampered": result.tampered, "flags": list(result.flags)}  # the whole run's, on both halves
    if len(result.tests) != len(union):  # e.g. a compile error reported without per-test results
        empty = RunResult(tests=[], compile_error=result.compile_error or "the program could not be run", **marks)
        return empty, empty
    by_key = {_key(t): r for t, r in zip(union, result.tests)}

    def subset(tests: list[TestCase]) -> RunResult:
        return RunResult(tests=[by_key[_key(t)] for t in tests], compile_error=result.compile_error, **marks)

    return subset(problem.public_tests), subset(problem.hidden_tests)


def _key(test: TestCase) -> tuple[Any, ...]:
    return (test.input, test.output, test.code, test.name)


def _check(result: RunResult) -> None:
    if result.sandbox_error:
        raise SandboxError(result.sandbox_error)
