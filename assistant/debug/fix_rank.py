"""Which of several plausible fixes (small edits after which every test passes) is the right one:
test-suite repair's overfitting problem (PraPR, CapGen, the overfitting-patch literature). The
tests cannot tell, so the order uses what is known besides them: an edit that makes a comparison
dunder (`__eq__`, `__lt__`, ...) return another constant, or moves a `def` line's default, passes
tests by changing what they compare with rather than what they compute, and ranks last; a
`variable` or far-comparison edit (the search's late kinds) next to last; then the more suspicious
line (its place in the search's order: failing frames, then the line spectrum); then the edit's
kind (small_edits.ORDER); then the smaller change (fewer tokens changed: of `int(d, 16) * 16` made
`int(d, 17) * 17` and `int(d, 16) * 17`, both passing, the second); then the line the fewest
passing tests ran (the fewest behaviours changed); then the order found.
"""

from __future__ import annotations

import difflib
import re
from typing import Sequence

from assistant.debug.localize import spans
from assistant.debug.small_edits import LATE, ORDER, SmallEdit
from sandbox.api import RunResult

COMPARISONS = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__"}
TOKEN = re.compile(r"\w+|\S")
CONSTANTS = ("return True", "return False", "return NotImplemented", "return 0", "return 1", "return -1")


def overfits(edit: SmallEdit, source: str) -> bool:
    """The edit moves a `def` line's default, or makes a comparison dunder return another constant."""
    if edit.before.lstrip().startswith(("def ", "async def ")):
        return True
    if edit.after.strip() not in CONSTANTS:
        return False
    try:
        found = spans(source)
    except SyntaxError:
        return False
    inner = [s for s in found if s.kind != "class" and s.contains(edit.line)]
    return bool(inner) and min(inner, key=lambda s: s.size).name in COMPARISONS


def changed_tokens(edit: SmallEdit) -> int:
    """How many tokens the edit changes (a pair: both lines'): the larger side of each differing run."""
    total = 0
    for one in (edit, *edit.also):
        a, b = TOKEN.findall(one.before), TOKEN.findall(one.after)
        runs = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        total += sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in runs if tag != "equal")
    return total


def ranked(found: Sequence[SmallEdit], source: str, order: Sequence[int], before: RunResult) -> list[SmallEdit]:
    """`found` (passing edits, in the order the search ran them) best first."""
    place = {line: i for i, line in enumerate(order)}
    passing_lines = [set(t.lines or ()) for t in before.tests if t.passed]

    def key(item: tuple[int, SmallEdit]) -> tuple[bool, bool, int, int, int, int, int]:
        index, edit = item
        ran = sum(edit.line in lines for lines in passing_lines)
        kind = ORDER.index(edit.operator) if edit.operator in ORDER else len(ORDER)
        late = edit.operator in LATE
        return overfits(edit, source), late, place.get(edit.line, len(place)), kind, changed_tokens(edit), ran, index

    return [edit for _, edit in sorted(enumerate(found), key=key)]
