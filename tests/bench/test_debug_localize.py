"""`cobalt bench localize`: on a real injected bug, the first prompt's functions come from the debug
session itself, once per localization order, and are scored against the case's buggy function.
tinydb-database-2's bug is in `TinyDB.__exit__`; its failing frame is in `TinyDB.close`, which
`__exit__` calls: the line spectrum names `__exit__`, the frames `close`."""

from __future__ import annotations

from typing import Any

import pytest

from assistant.debug.debug_session import LimitedRunner
from bench.debug_cases import read_cases
from bench.debug_localize import ORDERS, render, same_function, shown_functions, summarize
from sandbox.api import Limits


def test_a_nested_function_counts_as_its_enclosing_one() -> None:
    assert same_function("Query._generate_test", "Query._generate_test.runner")
    assert same_function("TinyDB.close", "TinyDB.close") and not same_function("TinyDB.close", "TinyDB.closed")
    assert ORDERS == ("lines", "frames")


@pytest.mark.docker
def test_each_order_names_its_own_first_function(sandbox: Any, test_config: Any) -> None:
    case = next(c for c in read_cases() if c.id == "tinydb-database-2")
    runner = LimitedRunner(sandbox, Limits(**{**vars(test_config.sandbox.limits), "timeout_s": 60}))
    shown = shown_functions(case, test_config, runner)
    assert shown["lines"][0] == "TinyDB.__exit__" and shown["frames"][0] == "TinyDB.close", shown
    report = summarize([{"case": case.id, "bug": case.function, **shown}])
    assert report["lines"]["named_first"]["k"] == 1 and report["frames"]["named_first"]["k"] == 0
    assert report["lines"]["shown"]["k"] == report["frames"]["shown"]["k"] == 1  # both show it
    text = render({"set": "debug", "cases": 1, "max_spans": 3, "orders": report, "wall_s": 1.0})
    assert "lines" in text and "1/1 1.00" in text and "0/1 0.00" in text
