"""Perturbed problems against in-context reward hacking (docs/method.md): choose two public
tests with different expected outputs and swap their expected outputs.

- stdio tests: the `output` fields are swapped.
- function tests: each test's last statement must be `assert <call> == <expected>`; the
  source of the two `<expected>` expressions is swapped (the sandbox reports the right-hand
  side as the expected value, so the feedback shows the wrong expectation).
- pytest problems and tests of any other shape cannot be perturbed: `None`.

Only public tests change; hidden tests (what grades a program) stay true. The problem keeps
its id; its content hash changes. `trainer.data.context` re-renders a trajectory's feedback
against the perturbed tests; this module only rewrites tests.
"""

from __future__ import annotations

import ast
import dataclasses
import random
from dataclasses import dataclass

from assistant.problems.schema import Problem
from sandbox import pyast
from sandbox.api import TestCase


@dataclass(frozen=True)
class Swap:
    """The two public test positions whose expected outputs were swapped, and those outputs
    (as shown to the model: stdout text, or the source of the expected expression)."""

    i: int
    j: int
    expected_i: str
    expected_j: str


def _assert_rhs(code: str) -> tuple[int, int, str] | None:
    """(start, end, source) of `<expected>` in a snippet ending with `assert X == <expected>`."""
    try:
        tree = pyast.parse(code)
    except SyntaxError:
        return None
    if not tree.body:
        return None
    last = tree.body[-1]
    if not (
        isinstance(last, ast.Assert)
        and isinstance(last.test, ast.Compare)
        and len(last.test.ops) == 1
        and isinstance(last.test.ops[0], ast.Eq)
    ):
        return None
    rhs = last.test.comparators[0]
    lines = code.splitlines(keepends=True)
    if rhs.end_lineno is None or rhs.end_col_offset is None:
        return None

    def offset(line: int, col: int) -> int:  # ast columns count UTF-8 bytes
        text = lines[line - 1]
        return sum(len(x) for x in lines[: line - 1]) + len(text.encode()[:col].decode(errors="ignore"))

    start = offset(rhs.lineno, rhs.col_offset)
    end = offset(rhs.end_lineno, rhs.end_col_offset)
    return start, end, code[start:end]


def expected_of(test: TestCase, kind: str) -> str | None:
    """What a test expects, in the form a swap exchanges; None when it has no such part."""
    if kind == "stdio":
        return test.output
    if kind == "function" and test.code:
        found = _assert_rhs(test.code)
        return found[2] if found else None
    return None


def _normalised(expected: str, kind: str) -> str:
    if kind == "stdio":
        return "\n".join(line.rstrip() for line in expected.strip().splitlines())
    try:
        return ast.dump(pyast.parse(expected, mode="eval"))
    except SyntaxError:
        return expected.strip()


def candidate_pairs(problem: Problem) -> list[tuple[int, int]]:
    """Pairs (i < j) of public tests whose expected outputs differ."""
    if problem.kind not in ("stdio", "function"):
        return []
    expected = [expected_of(t, problem.kind) for t in problem.public_tests]
    norm = [None if e is None else _normalised(e, problem.kind) for e in expected]
    return [
        (i, j)
        for i in range(len(norm))
        for j in range(i + 1, len(norm))
        if norm[i] is not None and norm[j] is not None and norm[i] != norm[j]
    ]


def _with_expected(test: TestCase, kind: str, new: str) -> TestCase:
    if kind == "stdio":
        return dataclasses.replace(test, output=new)
    assert test.code is not None
    found = _assert_rhs(test.code)
    assert found is not None
    start, end, _ = found
    return dataclasses.replace(test, code=test.code[:start] + new + test.code[end:])


def perturb_with_swap(problem: Problem, rng: random.Random) -> tuple[Problem, Swap] | None:
    """The perturbed problem and the swap made, or None when no two public tests differ."""
    pairs = candidate_pairs(problem)
    if not pairs:
        return None
    i, j = pairs[rng.randrange(len(pairs))]
    tests = list(problem.public_tests)
    a, b = expected_of(tests[i], problem.kind), expected_of(tests[j], problem.kind)
    assert a is not None and b is not None
    tests[i] = _with_expected(tests[i], problem.kind, b)
    tests[j] = _with_expected(tests[j], problem.kind, a)
    perturbed = dataclasses.replace(problem, public_tests=tests, hidden_tests=list(problem.hidden_tests))
    return perturbed, Swap(i, j, expected_i=a, expected_j=b)


def perturb_problem(problem: Problem, rng: random.Random) -> Problem | None:
    """`problem` with the expected outputs of two public tests (with different outputs)
    swapped, chosen with `rng`; None when that is impossible. Hidden tests are unchanged."""
    found = perturb_with_swap(problem, rng)
    return found[0] if found else None
