"""Two small problems shared by the assistant tests (no heavy imports)."""

from __future__ import annotations

from assistant.problems.schema import Problem
from sandbox.api import TestCase


def sum_problem() -> Problem:
    return Problem(
        id="sum-two",
        title="Sum",
        kind="stdio",
        statement="Read two integers and print their sum.",
        public_tests=[TestCase(input="2 3\n", output="5\n"), TestCase(input="10 -4\n", output="6\n")],
        hidden_tests=[
            TestCase(input="2 3\n", output="5\n"),
            TestCase(input="0 0\n", output="0\n"),
            TestCase(input="-1 -1\n", output="-2\n"),
        ],
    )


def add_problem() -> Problem:
    return Problem(
        id="add",
        title="Add",
        kind="function",
        entry_point="add",
        statement="Write add(a, b).",
        public_tests=[TestCase(code="assert add(1, 2) == 3")],
        hidden_tests=[TestCase(code="assert add(1, 2) == 3"), TestCase(code="assert add(2, 0) == 2")],
    )
