"""The small-edit search: the lines it tries first, its budget, what counts as a fix, and the
SEARCH/REPLACE reply a found fix becomes (the search in a real sandbox is in
tests/assistant/cli/test_cli_debug_search.py)."""

from __future__ import annotations

from assistant.debug.edit_search import (
    block_of,
    failing_first,
    fixes,
    headers_last,
    improves,
    run_timeout,
    search,
    search_lines,
)
from assistant.debug.edits import apply_search_replace
from assistant.debug.failures import Failure, Frame
from assistant.debug.insert_edits import BROAD
from assistant.debug.localize import spans
from assistant.debug.search_settings import SearchSettings
from assistant.debug.small_edits import small_edits
from sandbox.api import RunResult, TestResult

SOURCE = "def low(x):\n    return x > 0\n\n\ndef high(x):\n    if x > 0:\n        x = x - 1\n    return x > 0\n"


def result(passed: int, failed: int) -> RunResult:
    return RunResult(tests=[TestResult(status="passed")] * passed + [TestResult(status="failed")] * failed)


def test_lines_start_at_the_failing_frames_inside_the_implicated_code() -> None:
    low, high = [s for s in spans(SOURCE)]
    frames = [Frame("tests/t.py", 3, None), Frame("m.py", 7, "high")]
    failure = Failure("tests/t.py::test_high", "failed", "", "", frames)
    assert search_lines([high, low], [failure], "m.py") == [7, 5, 6, 8, 1, 2]
    elsewhere = Failure("t", "failed", "", "", [Frame("m.py", 2, "low")])
    # a frame outside the searched code is not searched
    assert search_lines([high], [elsewhere], "m.py") == [5, 6, 7, 8]


def test_the_first_edit_that_passes_every_test_wins_and_the_budget_holds() -> None:
    wanted = SOURCE.replace("    return x > 0\n\n", "    return x >= 0\n\n")
    runs: list[str] = []

    def run(program: str) -> RunResult:
        runs.append(program)
        return result(3, 0) if program == wanted else result(2, 1)

    found = search(SOURCE, [2], run, result(2, 1), SearchSettings(workers=1, plausible=0))
    assert found.edit is not None and found.edit.source == wanted and found.tried == len(runs) == 1
    assert found.summary()["found"] == "line 2: `return x > 0` -> `return x >= 0`"
    runs.clear()
    capped = search(SOURCE, [6, 7, 8, 2], run, result(2, 1), SearchSettings(max_runs=3, workers=1))
    assert capped.edit is None and capped.tried == len(runs) == 3
    ticks = iter(range(100))
    timed = search(
        SOURCE, [6, 7], run, result(2, 1), SearchSettings(max_seconds=2, workers=1), clock=lambda: next(ticks)
    )
    assert timed.edit is None and timed.tried == 1


def test_a_fix_must_keep_every_test_running() -> None:
    fewer = search(SOURCE, [2], lambda program: result(1, 0), result(2, 1), SearchSettings(workers=1))
    assert fewer.edit is None  # an edit after which a test is no longer collected is no fix


def test_the_found_edit_becomes_a_search_replace_block_that_applies_where_it_was_found() -> None:
    edit = next(e for e in small_edits(SOURCE, [8]) if e.after.strip() == "return x >= 0")
    block = block_of(SOURCE, edit)
    assert block.count("return x > 0") == 1 and "x = x - 1" in block  # widened until it occurs once
    applied = apply_search_replace(SOURCE, block)
    assert applied.error is None and applied.source == edit.source


def test_def_and_decorator_lines_are_searched_after_the_bodies() -> None:
    source = "@staticmethod\ndef f(x, limit=3):\n    return x > limit\n"
    assert headers_last(source, [1, 2, 3, 3]) == [3, 1, 2]
    first = next(iter(small_edits(source, headers_last(source, [2, 3]))))
    assert first.line == 3


def test_edits_run_side_by_side_and_the_first_in_order_that_fixes_wins() -> None:
    first, third = (SOURCE.replace("    return x > 0\n\n", f"    return {e}\n\n") for e in ("x >= 0", "x > 1"))
    assert [e.source for e in small_edits(SOURCE, [2])][:3:2] == [first, third]
    either = {first, third}
    runs: list[str] = []

    def run(program: str) -> RunResult:
        runs.append(program)
        return result(3, 0) if program in either else result(2, 1)

    found = search(SOURCE, [2], run, result(2, 1), SearchSettings(workers=3, max_runs=5, plausible=0))
    assert found.edit is not None and found.edit.after.strip() == "return x >= 0"  # the first of its batch
    assert found.tried == len(runs) == 3  # one whole batch ran
    capped = search(SOURCE, [6, 7, 8], lambda p: result(2, 1), result(2, 1), SearchSettings(workers=3, max_runs=4))
    assert capped.edit is None and capped.tried == 4  # the last batch is cut to the budget


def test_a_run_may_take_three_times_the_users_file_but_never_more_than_the_debug_limit() -> None:
    quick = RunResult(tests=[TestResult(status="failed", duration_s=0.5)])
    slow = RunResult(tests=[TestResult(status="failed", duration_s=10.0)] * 2)
    assert run_timeout(quick, SearchSettings(run_timeout_s=20), 120) == 20
    assert run_timeout(slow, SearchSettings(run_timeout_s=20), 120) == 66
    assert run_timeout(slow, SearchSettings(run_timeout_s=20), 40) == 40


EQ_SOURCE = (
    "class Money:\n"
    "    def __init__(self, cents):\n"
    "        self.cents = cents\n"
    "\n"
    "    def __eq__(self, other):\n"
    "        if not isinstance(other, Money):\n"
    "            return False\n"
    "        return self.cents == other.cents\n"
    "\n"
    "\n"
    "def add(a, b):\n"
    "    return Money(a.cents - b.cents)\n"
)


def test_after_the_first_fix_the_search_goes_on_and_ranks_a_comparison_constant_last() -> None:
    """`__eq__`'s `return False` -> `return True` passes `assert add(a, b) == c` too (the test's
    comparison always holds): found first (the failing frame runs it), it ranks below the right fix."""
    wrong = EQ_SOURCE.replace("            return False\n", "            return True\n")
    right = EQ_SOURCE.replace("a.cents - b.cents", "a.cents + b.cents")

    def run(program: str) -> RunResult:
        return result(3, 0) if program in (wrong, right) else result(2, 1)

    found = search(EQ_SOURCE, [7, 12], run, result(2, 1), SearchSettings(workers=1, after_fix_runs=40))
    assert found.edit is not None and found.edit.source == right
    assert [e.source for e in found.others] == [wrong]
    assert found.summary()["plausible"] == ["line 7: `return False` -> `return True`"]
    alone = search(EQ_SOURCE, [7, 12], run, result(2, 1), SearchSettings(workers=1, plausible=0))
    assert alone.edit is not None and alone.edit.source == wrong  # first wins without the ranking


def test_the_search_stops_looking_after_after_fix_runs_edits() -> None:
    runs: list[str] = []

    def run(program: str) -> RunResult:
        runs.append(program)
        return result(3, 0) if len(runs) == 1 else result(2, 1)

    found = search(SOURCE, [2, 6, 7, 8], run, result(2, 1), SearchSettings(workers=1, after_fix_runs=5))
    assert found.edit is not None and found.others == [] and found.tried == len(runs) == 6


def test_two_partial_fixes_on_two_lines_are_tried_together_ahead_of_the_other_edits() -> None:
    """A bug on two lines: each line's fix alone passes one more test; the pair passes all, and its
    reply is two SEARCH/REPLACE blocks that apply to the file."""
    one = SOURCE.replace("    return x > 0\n\n", "    return x >= 0\n\n")
    two = SOURCE.replace("x = x - 1", "x = x + 1")
    both = one.replace("x = x - 1", "x = x + 1")
    runs: list[str] = []

    def run(program: str) -> RunResult:
        runs.append(program)
        return {one: result(3, 1), two: result(3, 1), both: result(4, 0)}.get(program, result(2, 2))

    found = search(SOURCE, [2, 7], run, result(2, 2), SearchSettings(workers=1, plausible=0))
    assert found.edit is not None and found.edit.source == both and found.edit.operator == "pair"
    assert runs.index(both) == runs.index(two) + 1  # right after the second partial fix
    assert found.edit.describe() == "line 2: `return x > 0` -> `return x >= 0` and line 7: `x = x - 1` -> `x = x + 1`"
    assert apply_search_replace(SOURCE, block_of(SOURCE, found.edit)).source == both


def test_without_a_fix_the_edits_that_raised_the_passing_count_are_the_hints_best_first() -> None:
    better = SOURCE.replace("x = x - 1", "x = x + 1")
    good = SOURCE.replace("    return x > 0\n\n", "    return x >= 0\n\n")

    def run(program: str) -> RunResult:
        return {good: result(3, 2), better: result(4, 1)}.get(program, result(2, 3))

    found = search(SOURCE, [2, 7], run, result(2, 3), SearchSettings(workers=1, hints=2))
    assert found.edit is None
    assert [(e.source, n) for e, n in found.partial] == [(better, 4), (good, 3)]
    assert found.summary()["partial"][0] == {"edit": "line 7: `x = x - 1` -> `x = x + 1`", "passed": 4}
    fewer_ran = search(
        SOURCE, [2], lambda p: result(3, 0) if p == good else result(2, 3), result(2, 3), SearchSettings()
    )
    assert fewer_ran.partial == []  # 3 of 3 passing, but 2 tests fewer ran: neither a fix nor a hint


def test_insertions_are_interleaved_one_after_every_few_replacements() -> None:
    from assistant.debug.edit_search import interleave

    assert list(interleave(iter("abcdefg"), iter("XYZ"), 3)) == list("abcXdefYgZ")  # type: ignore[arg-type]
    assert list(interleave(iter("ab"), iter("XY"), 0)) == list("abXY")  # type: ignore[arg-type]
    runs: list[str] = []
    search(SOURCE, [7], lambda p: runs.append(p) or result(2, 1), result(2, 1), SearchSettings(workers=1, max_runs=4))
    kinds = {e.source: e.operator for e in small_edits(SOURCE, [7])}
    assert [kinds[p] in BROAD for p in runs] == [False, False, False, True]


def test_each_test_of_an_edited_file_gets_five_times_the_slowest_test_that_ended_at_least_a_second() -> None:
    from assistant.debug.edit_search import test_timeout

    slow = RunResult(tests=[TestResult(status="passed", duration_s=0.4), TestResult(status="failed", duration_s=10.0)])
    assert test_timeout(slow, 10) == 2.0  # the hung test's 10 s is not a passing test's time
    assert test_timeout(result(2, 1), 10) == 1.0 and test_timeout(slow, 1.5) == 1.5 and test_timeout(slow, 0) == 0.0
    # every test fails (one broken core function): a failing test's time is the measure; it was 1 s
    all_fail = RunResult(
        tests=[TestResult(status="failed", duration_s=3.0), TestResult(status="failed", duration_s=0.2)]
    )
    assert test_timeout(all_fail, 30) == 15.0
    mixed = RunResult(tests=[TestResult(status="passed", duration_s=0.05), TestResult(status="failed", duration_s=8.0)])
    assert test_timeout(mixed, 10) == 1.0  # some passed: their time, not the slow failing one's


def named(**statuses: str) -> RunResult:
    return RunResult(tests=[TestResult(name=n, status=s) for n, s in statuses.items()])


def test_an_edit_runs_the_failing_tests_alone_first_and_the_whole_command_only_when_one_passes() -> None:
    before = named(a="passed", b="failed", c="passed", d="failed")
    calls: list[tuple[str, tuple[str, ...]]] = []
    # what each edited file does on each test
    outcomes = {
        "nothing": named(a="passed", b="failed", c="passed", d="failed"),
        "fix": named(a="passed", b="passed", c="passed", d="passed"),
        "half": named(a="passed", b="passed", c="passed", d="failed"),
        "breaks": named(a="failed", b="passed", c="failed", d="passed"),
    }

    def run(source: str, only: tuple[str, ...] | list[str]) -> RunResult:
        calls.append((source, tuple(only)))
        whole = outcomes[source]
        return RunResult(tests=[t for t in whole.tests if not only or t.name in only])

    attempt = failing_first(run, before)
    nothing = attempt("nothing")
    assert calls == [("nothing", ("b", "d"))]  # the failing tests alone; none passes: no whole run
    assert not fixes(nothing, before) and not improves(nothing, before)
    assert fixes(attempt("fix"), before) and calls[-2:] == [("fix", ("b", "d")), ("fix", ())]
    assert improves(attempt("half"), before)
    broken = attempt("breaks")  # the failing tests pass, the whole command shows what broke
    assert len(broken.tests) == 4 and not fixes(broken, before) and not improves(broken, before)
    assert len(calls) == 7

    # every test failing, or a selection that ran everything (nothing matched): one run per edit
    calls.clear()
    failing_first(run, named(a="failed", b="failed", c="failed", d="failed"))("fix")
    assert calls == [("fix", ())]
    calls.clear()
    everything = failing_first(lambda source, only: run(source, ()), before)("fix")
    assert fixes(everything, before)


def test_a_pair_on_close_lines_whose_text_recurs_applies_as_blocks() -> None:
    """Each block widens until its SEARCH part is unique; the second's context held the first line
    in its old form, so after block 1 it matched nothing and the search's fix was lost."""
    from assistant.debug.small_edits import SmallEdit, paired

    source = "def f(a, b):\n    x = a - 1\n    y = b - 1\n    return x + y\n\n\n"
    source += "def g(a, b):\n    x = a - 1\n    y = b - 1\n    return x * y\n"
    lines = source.splitlines(keepends=True)
    pair = paired(
        source, SmallEdit(2, lines[1], "    x = a + 1\n", "", "op"), SmallEdit(3, lines[2], "    y = b + 1\n", "", "op")
    )
    assert pair is not None
    result = apply_search_replace(source, block_of(source, pair))
    assert result.error is None and result.source == pair.source
