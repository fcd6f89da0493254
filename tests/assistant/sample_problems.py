"""Small problems shared by the assistant and trainer tests (no heavy imports)."""

from __future__ import annotations

from collections.abc import Sequence

from assistant.problems.schema import Problem
from tests.sandbox.cases import assert_cases, stdio_cases


def sum_problem(pid: str = "sum-two", *more_hidden: tuple[str, str]) -> Problem:
    """Read two integers and print their sum; `more_hidden` adds (input, output) hidden tests."""
    public = stdio_cases(("2 3\n", "5\n"), ("10 -4\n", "6\n"))
    hidden = stdio_cases(("2 3\n", "5\n"), ("0 0\n", "0\n"), ("-1 -1\n", "-2\n"), *more_hidden)
    return Problem(pid, "Read two integers and print their sum.", "stdio", public, hidden, title="Sum")


def function_problem(
    pid: str, statement: str, public: Sequence[str], hidden: Sequence[str], entry_point: str = "", title: str = ""
) -> Problem:
    """A function problem graded by assert snippets; its entry point is named `pid` unless given."""
    return Problem(
        id=pid,
        statement=statement,
        kind="function",
        public_tests=assert_cases(*public),
        hidden_tests=assert_cases(*hidden),
        title=title,
        entry_point=entry_point or pid,
    )


def add_problem(
    pid: str = "add",
    public: Sequence[str] = ("assert add(1, 2) == 3",),
    hidden: Sequence[str] = ("assert add(1, 2) == 3", "assert add(2, 0) == 2"),
) -> Problem:
    return function_problem(pid, "Write add(a, b).", public, hidden, entry_point="add", title="Add")
