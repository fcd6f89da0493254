"""The small-edit search of `cobalt debug`: before the model is asked, the lines of the functions
the failing tests implicate are changed one small edit at a time (assistant/debug/small_edits.py)
and each edited file runs the project's whole test command in the sandbox; the first edit after
which every test passes (and no fewer tests run) is the fix. An edited file runs the tests that
failed alone first (`failing_first`), the whole command only when one of them passes. A test run
of a small project takes a fraction of a second in a warm sandbox, so a few hundred edits cost less
than one model turn on this CPU. The lines come from the failing frames, then the lines the failing
tests ran by suspiciousness (line-level spectrum), then the implicated functions; every line's
likely edits are tried before any line's many `variable` and far-comparison edits, and one edit
that puts back removed code (insert_edits.py: a term, a condition, a slice) after every
`insert_every` of the others. The search stops at `debug.search.max_runs` edits or `max_seconds`.
After the first edit that passes it goes on for up to `after_fix_runs` edits to find up to
`plausible` more, and ranks them (fix_rank.py): the right fix before one that merely passes. An
edit that raises the number of passing tests without passing all is a partial fix: the first few
are tried in pairs (a bug on two lines), and when nothing fixes the file the best of them are the
model's hints.

This is test-suite-driven repair: an edit that passes the tests can still be wrong where the tests
say nothing, so the fix is shown as a diff and is never written without `--apply`.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Callable, Iterable, Iterator, Sequence

from assistant.debug.failures import Failure
from assistant.debug.fix_rank import ranked
from assistant.debug.insert_edits import BROAD, INSERT
from assistant.debug.localize import Span
from assistant.debug.search_settings import SearchSettings
from assistant.debug.small_edits import LATE, ORDER, SmallEdit, paired, small_edits
from assistant.loop.candidates import passed_count
from sandbox.api import RunResult
from sandbox.pyast import source_lines

PAIRED = 4  # partial fixes kept and tried in pairs (at most 6 pairs)


@dataclass(frozen=True)
class SearchStarted:
    """An event of a debug session: the search begins (`lines` lines of `functions`)."""

    session_id: str
    functions: list[str]
    lines: int


@dataclass(frozen=True)
class SearchFinished:
    """An event of a debug session: the search ended, with the fix it found or none."""

    session_id: str
    tried: int
    seconds: float
    found: str | None  # the edit, described


@dataclass
class Found:
    edit: SmallEdit | None  # the best-ranked passing edit
    run: RunResult | None
    tried: int
    seconds: float
    others: list[SmallEdit] = field(default_factory=list)  # the other passing edits, best first
    partial: list[tuple[SmallEdit, int]] = field(default_factory=list)  # no fix: edits that raised the passing count

    def summary(self) -> dict[str, object]:
        edit = self.edit
        return {
            "tried": self.tried,
            "seconds": round(self.seconds, 1),
            "found": edit.describe() if edit else None,
            "operator": edit.operator if edit else None,
            "plausible": [e.describe() for e in self.others],
            "partial": [{"edit": e.describe(), "passed": n} for e, n in self.partial],
        }


def search_lines(spans: list[Span], failures: list[Failure], target: str, suspects: Sequence[int] = ()) -> list[int]:
    """The lines to search, in order: the failing frames inside the target (the deepest first, of
    the first failing test first) that lie in `spans`, then the `suspects` (the lines the failing
    tests ran, by suspiciousness: `spectrum.ranked_lines`), then every line of `spans` in their
    order."""
    framed = [
        frame.line
        for failure in failures
        for frame in reversed(failure.frames)
        if frame.path == target and any(s.contains(frame.line) for s in spans)
    ]
    whole = [line for span in spans for line in range(span.start, span.end + 1)]
    return list(dict.fromkeys([*framed, *suspects, *whole]))


HEADER = ("def ", "async def ", "class ", "@")


def headers_last(source: str, lines: Iterable[int]) -> list[int]:
    """`lines` with the `def`/`class`/decorator lines moved to the end: a default argument moved by
    one can pass the tests and still be the wrong fix, so the bodies are tried first."""
    text = source_lines(source)
    order = list(dict.fromkeys(lines))
    header = [n for n in order if 1 <= n <= len(text) and text[n - 1].lstrip().startswith(HEADER)]
    return [n for n in order if n not in header] + header


def run_timeout(before: RunResult, settings: SearchSettings, most: float) -> float:
    """Seconds one edited file's test run may take: `run_timeout_s`, or three times what the
    user's file took (its tests' time plus 2 s to start) when that is longer, never over `most`
    (the debug command's own limit)."""
    took = sum(t.duration_s for t in before.tests) + 2.0
    return min(most, max(settings.run_timeout_s, 3 * took))


def test_timeout(before: RunResult, most: float) -> float:
    """Seconds each test of an edited file may take: five times the slowest test that passed on the
    user's file (when none did, the slowest that failed by itself: the only measure of a fixed one's
    time), at least 1 s, never over `most` (debug.per_test_timeout_s). A bug that
    hangs a test costs its whole limit on every edit otherwise; an edit that ends the loop is fast."""
    stopped = 0.9 * most if most else float("inf")  # a test stopped at the limit (cobalt_timeout) did not end
    ended = [t for t in before.tests if t.status != "timeout" and t.duration_s < stopped]
    measured = [t for t in ended if t.passed] or ended  # the failing ones only when none passed
    slowest = max((t.duration_s for t in measured), default=0.0)
    return min(most, max(1.0, 5 * slowest)) if most else 0.0


def failing_first(run: Callable[[str, Sequence[str]], RunResult], before: RunResult) -> Callable[[str], RunResult]:
    """`run(source, only)` as a one-argument run that tries an edit on the tests that failed
    `before` alone and runs the whole command only when one of them passes. An edit after which
    all of them still fail can neither fix the file nor raise its passing count, so the selection's
    run stands for it (it ran fewer tests, so `fixes` and `improves` are False for it). An edit
    that hangs or breaks many tests costs one test's limit instead of every test's. When the
    selection ran as many tests as the whole command (nothing matched: all ran), it is the run."""
    failing = [t.name for t in before.tests if not t.passed]
    if not failing or len(failing) >= len(before.tests):
        return lambda source: run(source, ())

    def attempt(source: str) -> RunResult:
        first = run(source, failing)
        if len(first.tests) >= len(before.tests) or not any(t.passed for t in first.tests):
            return first
        return run(source, ())

    return attempt


def fixes(run: RunResult, before: RunResult) -> bool:
    """Every test passes and at least as many ran as before the edit."""
    return run.all_passed and len(run.tests) >= len(before.tests)


def search(
    source: str,
    lines: Iterable[int],
    run: Callable[[str], RunResult],
    before: RunResult,
    settings: SearchSettings,
    clock: Callable[[], float] = time.monotonic,
) -> Found:
    """The best small edit of `lines` after which `run` (the test command on the edited file)
    passes every test, within the settings' run and time budget: the first one in the search's
    order, then up to `plausible` more within `after_fix_runs` further edits, ranked
    (`fix_rank.ranked`). `workers` edits run at a time. An edit that passes more tests than
    `before` without passing all is kept as a partial fix (the best `hints` of them are the
    model's hints); each new one is also tried together with the earlier ones on other lines
    (`PAIRED` at most), ahead of the remaining single edits."""
    start, tried, order = clock(), 0, headers_last(source, lines)
    edits = candidates(source, order, settings)
    found: list[tuple[SmallEdit, RunResult]] = []
    partial: list[tuple[SmallEdit, int]] = []
    pairs: list[SmallEdit] = []
    budget = settings.max_runs
    with ThreadPoolExecutor(settings.workers) as pool:
        while tried < budget and clock() - start < settings.max_seconds:
            room = min(settings.workers, budget - tried)
            batch, pairs = pairs[:room], pairs[room:]
            batch += list(islice(edits, room - len(batch)))
            if not batch:
                break
            tried += len(batch)
            for edit, result in zip(batch, pool.map(lambda e: run(e.source), batch)):
                if fixes(result, before) and len(found) <= settings.plausible:
                    if not found:
                        budget = min(budget, tried + settings.after_fix_runs)
                    found.append((edit, result))
                elif not found and improves(result, before) and len(partial) < PAIRED:
                    pairs += [p for other, _ in partial if (p := paired(source, other, edit)) is not None]
                    partial.append((edit, passed_count(result)))
            if found and len(found) > settings.plausible:
                break
    hints = [edit for edit, _ in sorted(partial, key=lambda p: -p[1])[: settings.hints]]
    passing = {id(edit): n for edit, n in partial}
    if not found:
        return Found(None, None, tried, clock() - start, partial=[(e, passing[id(e)]) for e in hints])
    best, *others = ranked([edit for edit, _ in found], source, order, before)
    result = next(r for e, r in found if e is best)
    return Found(best, result, tried, clock() - start, others)


def candidates(source: str, order: Sequence[int], settings: SearchSettings) -> Iterator[SmallEdit]:
    """The edits in the order the search runs them: each line's replacements and targeted
    insertions (by line), one broad insertion after every `insert_every` of them, then the late
    kinds; each edited file once."""
    inserting = set(INSERT) if settings.insertions else set()
    early = [op for op in ORDER if op not in LATE and op not in BROAD and (op in inserting or op not in INSERT)]

    def stream(ops: Iterable[str]) -> Iterator[SmallEdit]:
        return small_edits(source, order, settings.siblings, list(ops))

    broad = stream(op for op in BROAD if op in inserting)
    return unique(chain(interleave(stream(early), broad, settings.insert_every), stream(LATE)))


def interleave(first: Iterator[SmallEdit], second: Iterator[SmallEdit], every: int) -> Iterator[SmallEdit]:
    """`every` edits of `first`, then one of `second`, and so on; the rest of `second` once `first`
    runs out (every=0: all of `first` before `second`)."""
    while True:
        taken = list(islice(first, every)) if every else list(first)
        yield from taken
        if len(taken) < every or not every:
            break
        yield from islice(second, 1)
    yield from second


def improves(run: RunResult, before: RunResult) -> bool:
    """More tests pass than before the edit, and no fewer ran."""
    return passed_count(run) > passed_count(before) and len(run.tests) >= len(before.tests)


def unique(edits: Iterable[SmallEdit]) -> Iterator[SmallEdit]:
    """Each edited file once (two operators can make the same file)."""
    seen: set[str] = set()
    for edit in edits:
        if edit.source not in seen:
            seen.add(edit.source)
            yield edit


def block_of(source: str, edit: SmallEdit) -> str:
    """The edit as SEARCH/REPLACE blocks (one per line it changes), each with as many lines around
    it as make its SEARCH part occur once in the text it applies to: `source` for the first, the
    text after the blocks before it for the next (blocks apply in order, and a block's context may
    hold a line an earlier block changed)."""
    blocks = []
    for e in (edit, *edit.also):
        blocks.append(_block(source, e))
        lines = source_lines(source, keepends=True)
        lines[e.line - 1] = e.after if e.after.endswith("\n") else e.after + "\n"
        source = "".join(lines)
    return "\n".join(blocks)


def _block(source: str, edit: SmallEdit) -> str:
    lines = source_lines(source, keepends=True)
    at, before, after = edit.line - 1, 0, 0
    while True:
        old = "".join(lines[at - before : at + after + 1])
        if source.count(old) == 1 or (before >= at and at + after + 1 >= len(lines)):
            break
        before, after = min(before + 1, at), min(after + 1, len(lines) - at - 1)
    new = "".join(lines[at - before : at]) + edit.after + "".join(lines[at + 1 : at + after + 1])
    old, new = (part if part.endswith("\n") else part + "\n" for part in (old, new))
    return f"<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE"
