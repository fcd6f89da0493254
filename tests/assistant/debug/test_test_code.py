"""The failing test's source from its node id: a test function, a test class's method, a
parametrized id; '' when the file or the function is not there."""

from __future__ import annotations

from pathlib import Path

from assistant.debug.test_code import test_source as source_of

TESTS = """import pytest


@pytest.mark.parametrize("n", [1, 2])
def test_one(n):
    assert n > 0


class TestGroup:
    def test_two(self):
        x = 2
        assert x == 2
"""


def test_a_function_a_method_and_a_parametrized_test_are_found(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(TESTS)
    one = source_of(tmp_path, "tests/test_a.py::test_one[2]")
    assert one.startswith('@pytest.mark.parametrize("n", [1, 2])\ndef test_one(n):') and "assert n > 0" in one
    two = source_of(tmp_path, "tests/test_a.py::TestGroup::test_two")
    assert two == "def test_two(self):\n    x = 2\n    assert x == 2\n"  # dedented out of its class
    assert source_of(tmp_path, "tests/test_a.py::TestGroup::test_two", max_lines=2).endswith("...  # (cut)\n")


def test_nothing_when_it_cannot_be_found(tmp_path: Path) -> None:
    (tmp_path / "test_b.py").write_text("def test_x(:\n")
    assert source_of(tmp_path, "test_b.py::test_x") == ""  # does not parse
    assert source_of(tmp_path, "missing.py::test_x") == ""
    assert source_of(tmp_path, "tests/test_a.py") == ""  # not a test id
    assert source_of(None, "a.py::test_x") == ""


def test_a_long_test_keeps_its_def_line_and_the_lines_up_to_the_failing_one(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(40))
    (tmp_path / "test_c.py").write_text(f"def test_long():\n{body}    assert x39 == 0\n")
    shown = source_of(tmp_path, "test_c.py::test_long", max_lines=6, line=42)  # the assert is line 42
    assert (
        shown == "def test_long():\n    ...  # (cut)\n    x37 = 37\n    x38 = 38\n    x39 = 39\n    assert x39 == 0\n"
    )
