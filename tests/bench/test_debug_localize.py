"""`cobalt bench localize`: on a real injected bug, the first prompt's functions come from the debug
session itself, once per localization order, and are scored against the case's buggy function.
tinydb-database-2's bug is in `TinyDB.__exit__`; its failing frame is in `TinyDB.close`, which
`__exit__` calls: the line spectrum names `__exit__`, the frames `close`."""

from __future__ import annotations

from typing import Any

import pytest

from assistant.debug.project_runs import LimitedRunner
from bench.debug import SETS
from bench.debug_cases import read_cases
from bench.debug_localize import ORDERS, render, same_function, shown_functions, summarize
from sandbox.api import Limits


def test_a_nested_function_counts_as_its_enclosing_one() -> None:
    assert same_function("Query._generate_test", "Query._generate_test.runner")
    assert same_function("TinyDB.close", "TinyDB.close") and not same_function("TinyDB.close", "TinyDB.closed")
    assert ORDERS == ("lines", "frames")


def test_the_bug_lines_are_the_lines_the_case_changed() -> None:
    for path in SETS.values():
        for case in read_cases(path):
            lines = case.bug_lines()
            got = case.buggy().splitlines()[lines.start - 1 : lines.stop - 1]
            changed = [line for line in case.replace.splitlines() if line not in case.search.splitlines()]
            if changed:  # the bug wrote lines: they are the replace's, one of them new
                assert set(got) <= set(case.replace.splitlines()) and set(got) & set(changed), case.id
            else:  # the bug only removed lines: one line, where they were
                assert len(lines) == 1, case.id


@pytest.mark.docker
def test_each_order_names_its_own_first_function(sandbox: Any, test_config: Any) -> None:
    case = next(c for c in read_cases() if c.id == "tinydb-database-2")
    runner = LimitedRunner(sandbox, Limits(**{**vars(test_config.sandbox.limits), "timeout_s": 60}))
    shown = shown_functions(case, test_config, runner)
    assert shown["lines"][0] == "TinyDB.__exit__" and shown["frames"][0] == "TinyDB.close", shown
    assert len(shown["marks_lines"]) == 1 and shown["marks_lines"][0] not in case.bug_lines()
    report = summarize([{"case": case.id, "bug": case.function, "bug_lines": list(case.bug_lines()), **shown}])
    assert report["lines"]["named_first"]["k"] == 1 and report["frames"]["named_first"]["k"] == 0
    assert report["lines"]["shown"]["k"] == report["frames"]["shown"]["k"] == 1  # both show it
    # one line alone has the top score inside the shown functions, and it is not the bug's (`__exit__`
    # runs `close` first): marked, and scored as a wrong mark
    assert report["lines"]["marked"]["k"] == 1 and report["lines"]["bug_marked"]["k"] == 0
    text = render({"set": "debug", "cases": 1, "max_spans": 3, "orders": report, "wall_s": 1.0})
    assert "lines" in text and "1/1 1.00" in text and "0/1 0.00" in text
