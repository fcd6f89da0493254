"""Localization from a failing test's short traceback: frames inside the file pick the innermost
function or method; without such a frame, the names the failing test calls; the target file of a
run comes from the deepest non-test frame."""

from __future__ import annotations

from assistant.debug.failures import Failure, frames
from assistant.debug.localize import implicated, is_test_file, pick_target, spans

SOURCE = """import math


def helper(a):
    return 10 // a


class Calc:
    factor = 2

    def mul(self, a, b):
        return helper(a) + b

    @staticmethod
    def add(a, b):
        return a + b


def area(r):
    return math.pi * r
"""

CRASH = """tests/test_calc.py:4: in test_mul
    assert Calc().mul(0, 3) == 6
pkg/calc.py:12: in mul
    return helper(a) + b
pkg/calc.py:5: in helper
    return 10 // a
E   ZeroDivisionError: integer division or modulo by zero"""

WRONG_VALUE = """tests/test_calc.py:7: in test_area
    assert area(2) == 12.566
E   assert 6.283 == 12.566
E    +  where 6.283 = area(2)"""


def _failure(text: str, test: str = "tests/test_calc.py::test_mul") -> Failure:
    return Failure(test, "failed", text.splitlines()[-1], text, frames(text))


def test_frames_are_read_outermost_first_with_the_sandbox_root_removed() -> None:
    text = CRASH.replace("pkg/calc.py:5", "/work/project/pkg/calc.py:5")
    found = frames(text)
    assert [(f.path, f.line, f.function) for f in found] == [
        ("tests/test_calc.py", 4, "test_mul"),
        ("pkg/calc.py", 12, "mul"),
        ("pkg/calc.py", 5, "helper"),
    ]


def test_spans_cover_functions_classes_and_methods_with_decorators() -> None:
    by_name = {s.qualname: (s.kind, s.start, s.end) for s in spans(SOURCE)}
    assert by_name["helper"] == ("function", 4, 5)
    assert by_name["Calc"] == ("class", 8, 16)
    assert by_name["Calc.mul"] == ("method", 11, 12)
    assert by_name["Calc.add"] == ("method", 14, 16)  # the decorator line is part of the span


def test_frames_inside_the_file_implicate_the_deepest_function_first() -> None:
    found = implicated(SOURCE, "pkg/calc.py", [_failure(CRASH)])
    assert [s.qualname for s in found] == ["helper", "Calc.mul"]


def test_a_wrong_value_without_a_frame_in_the_file_implicates_the_called_function() -> None:
    found = implicated(SOURCE, "pkg/calc.py", [_failure(WRONG_VALUE, "tests/test_calc.py::test_area")])
    assert [s.qualname for s in found] == ["area"]


def test_nothing_is_implicated_when_the_test_names_nothing_of_the_file() -> None:
    text = "tests/test_x.py:3: in test_x\n    assert other() == 1\nE   assert 0 == 1"
    assert implicated(SOURCE, "pkg/calc.py", [_failure(text, "tests/test_x.py::test_other")]) == []


def test_the_target_is_the_deepest_project_frame_outside_the_tests() -> None:
    assert pick_target([_failure(CRASH)]) == "pkg/calc.py"
    assert pick_target([_failure(WRONG_VALUE)]) is None
    library = "tests/test_a.py:3: in test_a\n    f()\n/usr/lib/python3/json/__init__.py:9: in f\nE   x"
    assert pick_target([_failure(library)]) is None


def test_test_files_are_recognised() -> None:
    assert is_test_file("tests/helpers.py") and is_test_file("pkg/test_x.py") and is_test_file("conftest.py")
    assert is_test_file("pkg/x_test.py") and not is_test_file("pkg/calc.py")


OPERATORS_SOURCE = """class Money:
    def __init__(self, cents):
        self.cents = cents

    def __add__(self, other):
        return Money(self.cents - other.cents)

    def __eq__(self, other):
        return self.cents == other.cents


def drop_table(name):
    return name
"""


def test_without_frames_or_names_the_operators_of_the_failing_line_implicate_their_dunders() -> None:
    text = "tests/test_money.py:4: in test_sum\n    assert (a + b).cents == 5\nE   assert -1 == 5"
    found = implicated(OPERATORS_SOURCE, "money.py", [_failure(text, "tests/test_money.py::test_sum")])
    assert [s.qualname for s in found][:2] == ["Money.__add__", "Money.__eq__"]


def test_then_the_words_of_the_failing_tests_name_pick_the_function() -> None:
    text = "tests/test_db.py:9: in test_drop_table_twice\n    assert db.tables() == set()\nE   assert {'t'} == set()"
    found = implicated(OPERATORS_SOURCE, "money.py", [_failure(text, "tests/test_db.py::test_drop_table_twice")])
    assert [s.qualname for s in found] == ["Money.__eq__"]  # `==` comes first; with no operator:
    plain = "tests/test_db.py:9: in test_drop_table_twice\n    check(db)\nE   AssertionError"
    found = implicated(OPERATORS_SOURCE, "money.py", [_failure(plain, "tests/test_db.py::test_drop_table_twice")])
    assert [s.qualname for s in found] == ["drop_table"]


def test_a_frame_in_a_property_getter_implicates_the_getter_not_its_setter() -> None:
    """The getter and setter share the qualname `C.value`: keyed by it, the setter was shown."""
    source = (
        "class C:\n    @property\n    def value(self):\n        return self._v + 1\n\n"
        "    @value.setter\n    def value(self, v):\n        self._v = v\n"
    )
    crash = (
        "tests/test_c.py:3: in test_value\n    assert C().value == 1\n"
        "pkg/c.py:4: in value\n    return self._v + 1\nE   AttributeError: no _v"
    )
    (found,) = implicated(source, "pkg/c.py", [_failure(crash, "tests/test_c.py::test_value")])
    assert (found.qualname, found.start, found.decorators) == ("C.value", 2, ("property",))
