"""`cobalt bench debug`: every case of examples/debug applies to its packed library (the search text
once, a 250-600-line module that still parses); the sample spreads over the libraries; and one case
runs end to end in the real sandbox, fixed in the edit mode by a scripted model that answers with
the library's own function, unfixed by one that resubmits the bug."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any

import pytest

from assistant.debug.localize import innermost, spans
from assistant.debug.project_runs import LimitedRunner
from bench.debug import render, run_case, spread, summarize
from bench.debug_cases import Case, read_cases
from sandbox.api import Limits
from tests.assistant.loop_fakes import ScriptedClient, answer

CASES = read_cases()


def test_every_case_applies_once_to_a_module_of_250_to_600_lines() -> None:
    assert len(CASES) >= 30 and len({c.project for c in CASES}) >= 4
    for case in CASES:
        original = case.original()
        assert 250 <= len(original.splitlines()) <= 600, case.id
        assert original.count(case.search) == 1, case.id
        assert case.buggy() != original and ast.parse(case.buggy()), case.id


def test_the_sample_spreads_over_every_library() -> None:
    sample = spread(CASES, 9)
    assert len(sample) == 9 and {c.project for c in sample} == {c.project for c in CASES}
    assert spread(CASES, 0) == CASES


def _oracle(case: Case) -> str:
    """The library's own version of the function the bug is in, as an edit answer."""
    source = case.original()
    line = source[: source.index(case.search)].count("\n") + 1
    span = innermost(spans(source), line)  # a nested function's enclosing method
    code = "".join(source.splitlines(keepends=True)[span.start - 1 : span.end])
    if span.kind == "method":
        return answer(f"class {case.function.split('.')[0]}:\n{code}")
    return answer(textwrap.dedent(code))


@pytest.mark.docker
def test_one_case_end_to_end_in_the_sandbox(sandbox: Any, test_config: Any, tmp_path: Path) -> None:
    case = next(c for c in CASES if c.id == "isodate-duration-4")
    runner = LimitedRunner(sandbox, Limits(**{**vars(test_config.sandbox.limits), "timeout_s": 60}))
    fixed = run_case(case, "functions", test_config, ScriptedClient([_oracle(case)]), runner, turns=2)
    assert fixed["fixed"] and fixed["turns"] == 1 and not fixed["overflow"], fixed
    stuck = ScriptedClient([answer(case.buggy()), answer(case.buggy())])
    unfixed = run_case(case, "whole_file", test_config, stuck, runner, turns=2)
    assert not unfixed["fixed"] and unfixed["turns"] == 2
    report = summarize([fixed, unfixed], ["functions", "whole_file"])
    assert report["functions"]["fixed"] == 1 and report["whole_file"]["fixed"] == 0


@pytest.mark.docker
def test_the_model_mode_never_searches_even_where_the_search_is_on(
    sandbox: Any, test_config: Any, tmp_path: Path
) -> None:
    case = next(c for c in CASES if c.id == "isodate-duration-4")  # one the search fixes
    search_on = test_config.debug.search.model_copy(update={"enabled": True})
    settings = test_config.model_copy(update={"debug": test_config.debug.model_copy(update={"search": search_on})})
    runner = LimitedRunner(sandbox, Limits(**{**vars(test_config.sandbox.limits), "timeout_s": 60}))
    alone = run_case(case, "model", settings, ScriptedClient([_oracle(case)]), runner, turns=1)
    assert alone["fixed"] and alone["fixed_by"] == "model" and alone["search"] is None, alone
    assert summarize([alone], ["model"])["model"]["fixed_by_model"] == 1


def _row(mode: str, fixed_by: str | None, wall_s: float, turns: int = 1) -> dict[str, Any]:
    return {"mode": mode, "fixed": fixed_by is not None, "fixed_by": fixed_by, "wall_s": wall_s, "turns": turns,
            "completion_tokens": [], "prompt_tokens": [], "overflow": False, "original_again": False}  # fmt: skip


def test_the_time_of_the_cases_that_reached_the_model_is_its_own_median() -> None:
    """Issue 48's 90 s is for the cases that reach the model; the search's fixes (seconds) would hide it."""
    rows = [_row("functions", "search", 10), _row("functions", "search", 12), _row("functions", "search", 14),
            _row("functions", None, 100), _row("functions", "model", 140), _row("functions", None, 5, turns=0),
            _row("search", "search", 9), _row("search", None, 45)]  # fmt: skip
    report = summarize(rows, ["functions", "search"])
    mine = report["functions"]
    assert mine["median_wall_s"] == 13 and mine["reached_model"] == 2 and mine["median_wall_s_reached_model"] == 120
    assert report["search"]["reached_model"] == 0 and report["search"]["median_wall_s_reached_model"] is None
    text = render({"cases": 6, "turns": 2, "model": "m", "wall_s": 1, "modes": report, "ratios": {}})
    assert "2 (120)" in text.splitlines()[2] and text.splitlines()[3].rstrip().endswith("0")


def test_a_malformed_cases_file_is_one_sentence_naming_the_line(tmp_path: Path) -> None:
    from assistant.errors import UserError

    for text, said in (("\n{not json\n", ":2: not a debug case"), ('{"id": "a"}\n', ":1: not a debug case")):
        path = tmp_path / "cases.jsonl"
        path.write_text(text)
        with pytest.raises(UserError, match=said):
            read_cases(path)
