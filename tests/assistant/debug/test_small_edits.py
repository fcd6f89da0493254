"""The small edits of `cobalt debug`'s search: which one-token and one-expression changes each
line gets, in which order, and that every one parses and changes exactly its line."""

from __future__ import annotations

import ast

from assistant.debug.small_edits import small_edits

SOURCE = """import re


def window(items, start, stop):
    if start < 0 or stop > len(items):
        return None
    return items[start:stop]


def label(n):
    return f"{n / 256.0 * 100:.1f}%"


def scale(a, b):
    return (a - b, a * 16, b * 16)


def find(pattern, text):
    for ch in text:
        if ch in "xyz" and not ch.isdigit():
            return re.match(pattern, text)
    return True
"""


def afters(line: int, siblings: dict[str, str] | None = None) -> list[str]:
    return [e.after.strip() for e in small_edits(SOURCE, [line], siblings)]


def test_comparisons_try_the_nearest_operator_first_then_the_others() -> None:
    found = afters(5)
    assert found[:2] == ["if start <= 0 or stop > len(items):", "if start < 0 or stop >= len(items):"]
    assert "if start < 0 and stop > len(items):" in found  # the boolean swap
    assert "if not (start < 0 or stop > len(items)):" in found  # the condition negated
    assert "if start != 0 or stop > len(items):" in found  # a farther comparison, later
    assert found.index("if start != 0 or stop > len(items):") > found.index("if start < 0 and stop > len(items):")


def test_slice_bounds_move_by_one_and_numbers_inside_f_strings_too() -> None:
    assert {"return items[start + 1:stop]", "return items[start:stop - 1]"} <= set(afters(7))
    assert 'return f"{n / 255.0 * 100:.1f}%"' in afters(11)


def test_operands_swap_and_a_repeated_number_moves_together() -> None:
    found = afters(15)
    assert "return (b - a, a * 16, b * 16)" in found
    assert "return (a - b, a * 17, b * 17)" in found and "return (a - b, a * 17, b * 16)" in found
    assert "return (a * 16, a - b, b * 16)" in found  # neighbouring elements swapped


def test_not_is_removed_in_becomes_not_in_but_never_in_a_for_line() -> None:
    assert 'if ch not in "xyz" and not ch.isdigit():' in afters(20)
    assert 'if ch in "xyz" and ch.isdigit():' in afters(20)
    assert not any("not in" in a for a in afters(19))


def test_siblings_are_swapped_only_when_configured_and_constants_flip() -> None:
    assert "return re.search(pattern, text)" not in afters(21)
    assert "return re.search(pattern, text)" in afters(21, {"match": "search"})
    assert afters(22) == ["return False"]


def test_every_edit_parses_changes_only_its_line_and_files_are_unique() -> None:
    edits = list(small_edits(SOURCE, range(1, 23), {"match": "search"}))
    assert len(edits) > 30
    assert len({e.source for e in edits}) == len(edits) and SOURCE not in {e.source for e in edits}
    old = SOURCE.splitlines()
    for edit in edits:
        ast.parse(edit.source)
        new = edit.source.splitlines()
        assert [i + 1 for i, (a, b) in enumerate(zip(old, new)) if a != b] == [edit.line]
        assert edit.describe().startswith(f"line {edit.line}: `")


def test_lines_come_in_the_given_order_and_bad_input_gives_nothing() -> None:
    lines = [e.line for e in small_edits(SOURCE, [15, 5, 15, 99])]
    assert lines == sorted(lines, key=[15, 5].index)
    assert list(small_edits("def f(:\n", [1])) == []


def test_a_local_read_is_replaced_by_another_local_of_its_own_function() -> None:
    source = (
        "LIMIT = 3\n\n\ndef pick(self, first, second):\n    total = first + LIMIT\n    return total\n\n\n"
        "def other(x):\n    return x\n"
    )
    found = [e.after.strip() for e in small_edits(source, [5, 6]) if e.operator == "variable"]
    assert "total = second + LIMIT" in found and "return first" in found and "return second" in found
    assert not any("self" in a or "x" in a.split() for a in found)  # no self, no other function's names
    assert not any("LIMIT" not in a for a in found if a.startswith("total ="))  # a global is never a swap target
    assert [e for e in small_edits(source, [10]) if e.operator == "variable"] == []  # one local: nothing to swap


def test_a_repeated_number_also_moves_together_within_its_role_only() -> None:
    source = "def expand(v, w):\n    return (int(v, 16) * 16, int(w, 16) * 16)\n"
    found = [e.after.strip() for e in small_edits(source, [2])]
    assert "return (int(v, 16) * 17, int(w, 16) * 17)" in found  # the factors, not the bases
    assert "return (int(v, 17) * 17, int(w, 17) * 17)" in found  # every 16 of the line
    assert "return (int(v, 16) * 17, int(w, 16) * 16)" in found  # one at a time
