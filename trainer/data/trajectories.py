"""A stored session as the bandit's data selection sees it (`trainer.data.dataset`): each turn's
pass rate on all tests, the trajectory's spread d = max - min, and the max-variance subset of
trajectories a task keeps (docs/method.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from assistant.store.trajectory import SessionRecord, Turn
from sandbox.api import TestResult

SCRIPTED_SOURCES = ("synthetic",)
"""Sessions whose turns after the first are scripted (trainer.repair.curriculum: mutant, then
the canonical solution): they give prompts after their first turn only."""


def max_variance_subset(d: list[float], k: int = 4) -> list[int]:
    """Indices (ascending) of the at most `k` values of `d` to keep: all of them when there
    are k or fewer; otherwise, sorting by d (ties keep their order), the set of the (k - j)
    lowest and the j highest, j = 0..k-1, whose values have the largest variance (the
    smallest j wins a tie)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if len(d) <= k:
        return list(range(len(d)))
    order = sorted(range(len(d)), key=lambda i: (d[i], i))
    best: list[int] = []
    best_var = -1.0
    for j in range(k):
        chosen = order[: k - j] + (order[len(order) - j :] if j else [])
        var = float(np.var([d[i] for i in chosen]))
        if var > best_var + 1e-12:
            best, best_var = chosen, var
    return sorted(best)


def _test_key(t: TestResult) -> tuple[Any, ...]:
    return (t.input, t.expected, t.code, t.name)


def turn_pass_rate(turn: Turn) -> float:
    """A turn's pass rate on all tests (public and hidden, each distinct test once); the
    stored hidden rate when per-test results are missing (imported records)."""
    if turn.program is None:
        return 0.0
    if turn.public is None or turn.hidden is None:
        return float(turn.hidden_pass_rate)
    if turn.public is turn.hidden or (not turn.public.tests and not turn.hidden.tests):
        return float(turn.hidden.pass_rate)
    union: dict[tuple[Any, ...], bool] = {}
    for t in turn.public.tests + turn.hidden.tests:
        union.setdefault(_test_key(t), t.passed)
    return sum(union.values()) / len(union) if union else 0.0


@dataclass
class Trajectory:
    """One stored session of one task, with its per-turn pass rates on all tests."""

    session_id: str
    turns: list[Turn]
    rates: list[float]
    source: str = ""
    baseline: float | None = None  # a debug session: the user's file's pass rate before the first turn

    @property
    def d(self) -> float:
        return max(self.rates) - min(self.rates) if self.rates else 0.0

    @classmethod
    def of(cls, session: SessionRecord) -> "Trajectory":
        baseline = (session.meta or {}).get("baseline_pass_rate")
        rates = [turn_pass_rate(t) for t in session.turns]
        return cls(session.id, list(session.turns), rates, session.source, baseline)

    @property
    def context_limit(self) -> int | None:
        """Earlier turns a prompt may hold: 1 for a scripted session (its later turns are not a model's)."""
        return 1 if self.source in SCRIPTED_SOURCES else None
