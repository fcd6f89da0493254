"""The order of plausible fixes (assistant/debug/fix_rank.py): the patterns that pass tests without
fixing the code rank last."""

from __future__ import annotations

from assistant.debug.fix_rank import changed_tokens, overfits, ranked
from assistant.debug.small_edits import small_edits
from sandbox.api import RunResult, TestResult

SOURCE = (
    "class Span:\n"
    "    def __init__(self, n, opened=False):\n"
    "        self.n = n\n"
    "        self.opened = opened\n"
    "\n"
    "    def __lt__(self, other):\n"
    "        return False\n"
    "\n"
    "    def close(self):\n"
    "        self.opened = False\n"
    "        return False\n"
)


def _edit(line: int, after: str):  # type: ignore[no-untyped-def]
    return next(e for e in small_edits(SOURCE, [line]) if e.after.strip() == after)


def test_a_comparison_dunder_constant_and_a_moved_default_overfit() -> None:
    assert overfits(_edit(7, "return True"), SOURCE)  # __lt__ now always holds
    assert overfits(_edit(2, "def __init__(self, n, opened=True):"), SOURCE)
    assert not overfits(_edit(11, "return True"), SOURCE)  # an ordinary method's constant
    assert not overfits(_edit(10, "self.opened = True"), SOURCE)


def test_overfitting_edits_rank_last_then_the_more_suspicious_line() -> None:
    dunder, close, assign = _edit(7, "return True"), _edit(11, "return True"), _edit(10, "self.opened = True")
    before = RunResult(tests=[TestResult("passed", lines=[10, 11]), TestResult("failed", lines=[7, 10, 11])])
    assert ranked([dunder, close, assign], SOURCE, [7, 11, 10], before) == [close, assign, dunder]
    assert ranked([dunder, assign, close], SOURCE, [7, 10, 11], before) == [assign, close, dunder]


HEX = "def rgb(v):\n    return int(v[1], 16) * 16, int(v[2], 16) * 16\n"


def test_of_two_passing_edits_of_a_line_the_smaller_change_ranks_first() -> None:
    """webcolors-html5-2: the factors 16 -> 17 is the fix; every 16 -> 17 also passes its tests."""
    edits = list(small_edits(HEX, [2]))
    every = next(e for e in edits if e.after.strip() == "return int(v[1], 17) * 17, int(v[2], 17) * 17")
    factors = next(e for e in edits if e.after.strip() == "return int(v[1], 16) * 17, int(v[2], 16) * 17")
    assert edits.index(every) < edits.index(factors)  # the search finds the larger one first
    assert (changed_tokens(every), changed_tokens(factors)) == (4, 2)
    before = RunResult(tests=[TestResult("failed", lines=[2])])
    assert ranked([every, factors], HEX, [2], before) == [factors, every]
