"""Builders shared by the tests that grade programs: test cases from plain values, a small
pytest project on disk, and the argv of `cobalt bench sandbox`."""

from __future__ import annotations

from pathlib import Path

from sandbox import TestCase


def stdio_cases(*pairs: tuple[str, str]) -> list[TestCase]:
    """stdio test cases from (input, expected output) pairs."""
    return [TestCase(input=given, output=expected) for given, expected in pairs]


def assert_cases(*snippets: str) -> list[TestCase]:
    """function test cases from assert snippets."""
    return [TestCase(code=snippet) for snippet in snippets]


def calc_project(root: Path, test_calc: str) -> Path:
    """A pytest project at `root` (returned): `calc.py` with an `add` that raises (the file a
    program replaces), `test_calc` as `tests/test_calc.py`, and a conftest that puts `root` on
    sys.path."""
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    (root / "conftest.py").write_text("import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")
    (root / "tests" / "test_calc.py").write_text(test_calc)
    return root


def bench_argv(options: str) -> list[str]:
    """The argv of `cobalt bench sandbox OPTIONS --json` (OPTIONS split on white space)."""
    return ["bench", "sandbox", *options.split(), "--json"]
