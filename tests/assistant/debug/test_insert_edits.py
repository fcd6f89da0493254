"""The insertion edits of `cobalt debug`'s search: code a bug removed is put back from what the
file itself holds (an unused local, a width, a call, a tested name, a term, a slice)."""

from __future__ import annotations

from assistant.debug.insert_edits import INSERT
from assistant.debug.small_edits import small_edits

SOURCE = """def normalize(value):
    return value.lower()


def add(other, years, months):
    carry, month = divmod(other.month + months, 12)
    year = other.year + years
    return year, month


def lookup(table, key):
    found = normalize(key)
    return table.get(key)


def rgb(red, green, blue):
    return f"#{red:x}{green:x}{blue:x}"


def quot(val, low, high):
    a, b = val, high - low
    return a / b


def emit(pretty, depth, out):
    if depth == 0 and pretty:
        out.append("<")
    if pretty:
        out.append("\\n")


def window(length, start, stop, items, last):
    head = last(items)
    return range(length - start, length - stop)
"""


def inserted(line: int) -> list[tuple[str, str]]:
    return [(e.operator, e.after.strip()) for e in small_edits(SOURCE, [line], operators=INSERT)]


def afters(line: int) -> list[str]:
    return [after for _, after in inserted(line)]


def test_a_local_assigned_and_never_read_is_added_as_a_term_before_anything_else() -> None:
    found = inserted(7)
    assert found[0] == ("insert-unused", "year = other.year + years + carry")  # at the end of the sum first
    assert ("insert-unused", "year = other.year + carry + years") in found
    assert {op for op, after in found if "carry" in after} == {"insert-unused"}
    assert not any("month" in after for after in afters(7))  # `month` is read: not unused


def test_a_call_the_file_applies_to_the_same_name_wraps_it() -> None:
    assert "return table.get(normalize(key))" in afters(13)
    assert not any("normalize(normalize(" in after for after in afters(12))


def test_a_format_spec_is_widened_on_every_occurrence_first_then_one_at_a_time() -> None:
    found = afters(17)
    assert found[0] == 'return f"#{red:02x}{green:02x}{blue:02x}"'
    assert 'return f"#{red:02x}{green:x}{blue:x}"' in found


def test_a_term_the_line_already_subtracts_is_added_to_another_operand() -> None:
    assert "a, b = val - low, high - low" in afters(21)
    assert "a, b = val + 1, high - low" in afters(21)


def test_a_condition_from_the_functions_other_tests_is_added_with_and_or() -> None:
    found = afters(28)
    assert found[:2] == ["if pretty and depth:", "if pretty or depth:"]
    assert not any("out" in after for after in found if after.startswith("if"))  # never tested


def test_the_same_operand_in_the_same_role_takes_the_term_everywhere_at_once() -> None:
    assert "return range(length - 1 - start, length - 1 - stop)" in afters(34)
    assert "return range(length - start, length - stop)" not in afters(34)  # the file itself is never an edit


def test_a_slice_is_added_to_a_name_passed_on() -> None:
    assert {"head = last(items[:-1])", "head = last(items[1:])"} <= set(afters(33))


def test_insertions_come_after_every_replacement_of_a_line_and_parse() -> None:
    everything = list(small_edits(SOURCE, [21, 34]))
    kinds = [e.operator for e in everything if e.line == 21]
    first_insert = next(i for i, k in enumerate(kinds) if k in INSERT)
    assert all(k in INSERT for k in kinds[first_insert:])
    for edit in everything:
        compile(edit.source, "<edit>", "exec")
        assert edit.source.splitlines()[: edit.line - 1] == SOURCE.splitlines()[: edit.line - 1]


def test_an_assignment_that_lost_its_operator_gets_it_back() -> None:
    source = (
        "def step(self, items):\n    self.index = 1\n    while items:\n        self.index = 1\n"
        "        total = items[0] = 2\n"
    )
    found = [(e.operator, e.after.strip(), e.line) for e in small_edits(source, [2, 4, 5], operators=INSERT)]
    assert not any(line == 2 for op, _, line in found if op == "insert-augment")  # outside a loop: left alone
    found = [(op, after) for op, after, _ in found]
    assert ("insert-augment", "self.index += 1") in found and ("insert-augment", "self.index -= 1") in found
    assert not any(op == "insert-augment" and "total" in after for op, after in found)  # two targets: left alone
