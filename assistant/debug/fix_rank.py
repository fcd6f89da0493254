"""Which of several plausible fixes (small edits after which every test passes) is the right one:
test-suite repair's overfitting problem (PraPR, CapGen, the overfitting-patch literature). The
tests cannot tell, so the order uses what is known besides them: an edit that makes a comparison
dunder (`__eq__`, `__lt__`, ...) return another constant, or moves a `def` line's default, passes
tests by changing what they compare with rather than what they compute, and ranks last; a
`variable` or far-comparison edit (the search's late kinds) next to last; then the more suspicious
line (its place in the search's order: failing frames, then the line spectrum); then the edit's
kind (small_edits.ORDER); then the line the fewest passing tests ran (the fewest behaviours
changed); then the order found.
"""

from __future__ import annotations

from typing import Sequence

from assistant.debug.localize import spans
from assistant.debug.small_edits import LATE, ORDER, SmallEdit
from sandbox.api import RunResult

COMPARISONS = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__"}
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


def ranked(found: Sequence[SmallEdit], source: str, order: Sequence[int], before: RunResult) -> list[SmallEdit]:
    """`found` (passing edits, in the order the search ran them) best first."""
    place = {line: i for i, line in enumerate(order)}
    passing_lines = [set(t.lines or ()) for t in before.tests if t.passed]

    def key(item: tuple[int, SmallEdit]) -> tuple[bool, bool, int, int, int, int]:
        index, edit = item
        ran = sum(edit.line in lines for lines in passing_lines)
        kind = ORDER.index(edit.operator) if edit.operator in ORDER else len(ORDER)
        late = edit.operator in LATE
        return overfits(edit, source), late, place.get(edit.line, len(place)), kind, ran, index

    return [edit for _, edit in sorted(enumerate(found), key=key)]
