"""The small-edit search of `cobalt debug`: before the model is asked, the lines of the functions
the failing tests implicate are changed one small edit at a time (assistant/debug/small_edits.py)
and each edited file runs the project's whole test command in the sandbox; the first edit after
which every test passes (and no fewer tests run) is the fix. A test run of a small project takes
a fraction of a second in a warm sandbox, so a few hundred edits cost less than one model turn on
this CPU. The search stops at `debug.search.max_runs` edits or `max_seconds`.

This is test-suite-driven repair: an edit that passes the tests can still be wrong where the tests
say nothing, so the fix is shown as a diff and is never written without `--apply`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable

from assistant.debug.failures import Failure
from assistant.debug.localize import Span
from assistant.debug.search_settings import SearchSettings
from assistant.debug.small_edits import SmallEdit, small_edits
from sandbox.api import RunResult


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
    edit: SmallEdit | None
    run: RunResult | None
    tried: int
    seconds: float

    def summary(self) -> dict[str, object]:
        edit = self.edit
        return {
            "tried": self.tried,
            "seconds": round(self.seconds, 1),
            "found": edit.describe() if edit else None,
            "operator": edit.operator if edit else None,
        }


def search_lines(spans: list[Span], failures: list[Failure], target: str) -> list[int]:
    """The lines to search, in order: the failing frames inside the target (the deepest first, of
    the first failing test first) that lie in `spans`, then every line of `spans` in their order."""
    framed = [
        frame.line
        for failure in failures
        for frame in reversed(failure.frames)
        if frame.path == target and any(s.contains(frame.line) for s in spans)
    ]
    whole = [line for span in spans for line in range(span.start, span.end + 1)]
    return list(dict.fromkeys(framed + whole))


HEADER = ("def ", "async def ", "class ", "@")


def headers_last(source: str, lines: Iterable[int]) -> list[int]:
    """`lines` with the `def`/`class`/decorator lines moved to the end: a default argument moved by
    one can pass the tests and still be the wrong fix, so the bodies are tried first."""
    text = source.splitlines()
    order = list(dict.fromkeys(lines))
    header = [n for n in order if 1 <= n <= len(text) and text[n - 1].lstrip().startswith(HEADER)]
    return [n for n in order if n not in header] + header


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
    """The first small edit of `lines` after which `run` (the test command on the edited file)
    passes every test, within the settings' run and time budget."""
    start, tried = clock(), 0
    for edit in small_edits(source, headers_last(source, lines), settings.siblings):
        if tried >= settings.max_runs or clock() - start >= settings.max_seconds:
            break
        tried += 1
        result = run(edit.source)
        if fixes(result, before):
            return Found(edit, result, tried, clock() - start)
    return Found(None, None, tried, clock() - start)
