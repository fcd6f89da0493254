"""Spectrum-based fault localization over functions: the sandbox reports, for every test, which
functions of the file being debugged it ran (`TestResult.calls`, first lines); a function run by
many failing tests and few passing ones is suspicious. Scored by Ochiai,
ef / sqrt(F * (ef + ep)) (ef, ep: failing and passing tests that ran it; F: all failing tests),
the standard of SBFL studies (e.g. Abreu et al. 2007; Zou et al. 2019 for its ranking power).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable

from assistant.debug.localize import Span, innermost
from sandbox.api import TestResult

RENDERING = {"__repr__", "__str__", "__format__"}  # pytest's failure report runs these for any failing test
WITNESS = "__eq__"  # a failing `assert x == y` on the project's objects runs its False branch


def ochiai(ef: int, ep: int, failing: int) -> float:
    """ef / sqrt(F (ef + ep)): ef, ep the failing and passing tests that ran it, F all failing tests."""
    return ef / math.sqrt(failing * (ef + ep))


def ranked(all_spans: list[Span], tests: Iterable[TestResult], least: float = 0.0) -> list[Span]:
    """Functions and methods by suspiciousness, highest first (ties: fewer passing tests that
    ran it, then the smaller span, then the earlier one: never the order of a set of spans, which
    changes from run to run with Python's string hashing); [] when no test reports its calls or
    none fails."""
    callable_spans = [s for s in all_spans if s.kind != "class"]
    failing, passing = 0, 0
    ef: dict[Span, int] = {}
    ep: dict[Span, int] = {}
    for test in tests:
        if test.calls is None:
            continue
        ran = {innermost(callable_spans, line) for line in test.calls} - {None}
        if test.passed:
            passing += 1
            for span in ran:
                ep[span] = ep.get(span, 0) + 1
        else:
            failing += 1
            for span in ran:
                ef[span] = ef.get(span, 0) + 1
    if not failing:
        return []
    scored = [
        (ochiai(ef[s], ep.get(s, 0), failing), -ep.get(s, 0), -s.size, s)
        for s in ef  # a function no failing test ran is not suspicious
    ]
    scored.sort(key=lambda t: (t[3].name not in RENDERING, *t[:3], -t[3].start), reverse=True)
    return [s for score, *_, s in scored if score > least]


def scored_lines(all_spans: list[Span], tests: Iterable[TestResult]) -> list[tuple[int, float]]:
    """Lines of the file with their Ochiai score over the lines each test ran (`TestResult.lines`),
    highest first (ties: fewer passing tests that ran it, then the earlier line); only lines some
    failing test ran, none inside `__repr__`/`__str__`/`__format__`; [] when no test reports its
    lines or none fails."""
    failing, ef, ep = 0, Counter[int](), Counter[int]()
    for test in tests:
        if test.lines is None:
            continue
        if test.passed:
            ep.update(set(test.lines))
        else:
            failing += 1
            ef.update(set(test.lines))
    if not failing:
        return []

    def rendering(line: int) -> bool:
        span = innermost(all_spans, line)
        return span is not None and span.name in RENDERING

    scored = [(-ochiai(ef[n], ep[n], failing), ep[n], n) for n in ef if not rendering(n)]
    return [(n, -score) for score, _, n in sorted(scored)]


def ranked_lines(all_spans: list[Span], tests: Iterable[TestResult]) -> list[int]:
    """The lines of `scored_lines`, most suspicious first."""
    return [n for n, _ in scored_lines(all_spans, tests)]


def ranked_by_lines(all_spans: list[Span], tests: Iterable[TestResult]) -> list[Span]:
    """Functions and methods in the order of their most suspicious line (`ranked_lines`): the one
    holding the top line first, except that an `__eq__` is never first when another follows it: the
    failing tests' own `assert x == y` run its False branch, so its lines look suspicious whatever
    the bug (two injected bugs of `isodate` lost their first place to `Duration.__eq__`). [] when
    no test reports its lines or none fails. On the bugs of `examples/debug/` its first function is
    the buggy one in 36 of 46 cases, against 23 for the failing frames first (`localize.implicated`'s
    own order; docs/experiments/2026-11-29-debug-localize.md)."""
    callable_spans = [s for s in all_spans if s.kind != "class"]
    found: list[Span] = []
    for line in ranked_lines(all_spans, tests):
        span = innermost(callable_spans, line)
        if span is not None and span not in found:
            found.append(span)
    if len(found) > 1 and found[0].name == WITNESS:
        found[0], found[1] = found[1], found[0]  # second, still shown: the bug may be in it
    return found
