"""The promotion gate: evaluate the current model and the candidate on the validation tasks
with the evaluation issue's code (`trainer.eval.evaluate`: multi-turn sessions stored with
source `eval`, feedback from public tests, grading on hidden tests, paired by task and
sample), compare them with paired bootstrap intervals, and decide.

Decision ("not worse within the interval"), on the comparison's metric (configs/eval.yaml
`compare:`, default Pass@1 at the last turn): promote when `compare(...).not_worse` holds
(the interval of candidate - current reaches -margin or above), the mean drop is at most
`gate.max_mean_drop`, and both evaluations are complete (no aborted run, at most 10% of the
sessions missing): a dead server must not look like a tie. Nothing here promotes;
`trainer.nightly` acts on the decision.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

from assistant.interfaces import ChatModel, Runner
from assistant.problems import Problem
from assistant.settings import LoopSettings
from assistant.store import Store
from trainer.eval.settings import EvalSettings
from trainer.settings import GateSettings


@dataclass
class Arm:
    """One side of the comparison: a client and the adapter name it serves (None: base)."""

    label: str
    client: ChatModel
    adapter: str | None = None


def select_problems(problems: list[Problem], limit: int, seed: int) -> list[Problem]:
    """A deterministic subset of `limit` tasks (all when limit is 0 or larger)."""
    if limit <= 0 or len(problems) <= limit:
        return list(problems)
    rank = sorted(problems, key=lambda p: hashlib.sha256(f"{seed}:{p.id}:{p.content_hash()}".encode()).hexdigest())
    return rank[:limit]


@dataclass
class GateReport:
    turns: int
    samples: int
    tasks: int
    metric: str
    per_turn: list[dict[str, Any]] = field(default_factory=list)
    promote: bool = False
    reason: str = ""
    comparison: dict[str, Any] = field(default_factory=dict)
    incomplete: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _incomplete(report: Any, expected: int) -> str | None:
    if report.aborted:
        return f"the evaluation of {report.label} was aborted ({report.aborted})"
    if len(report.missing) > 0.1 * expected:
        return f"{len(report.missing)} of {expected} sessions of {report.label} are missing"
    return None


def compare(loop: LoopSettings, evaluation: EvalSettings, problems: list[Problem], current: Arm, candidate: Arm,
            sandbox: Runner, store: Store, settings: GateSettings,
            progress: Callable[[str], None] = lambda _: None) -> GateReport:
    """Evaluate both arms on `problems` (sessions of the `loop` settings with the
    `evaluation` overrides) and decide (see the module doc)."""
    from trainer.eval.evaluate import evaluate
    from trainer.eval.evaluate import compare as paired

    es = dataclasses.replace(evaluation, resamples=settings.bootstrap, confidence=settings.confidence)
    reports = []
    for arm in (current, candidate):
        progress(f"gate: evaluating {arm.client.display_name} ({arm.label})")
        reports.append(evaluate(loop, problems, arm.client, sandbox, store, turns=settings.turns,
                                samples=settings.samples, concurrency=settings.concurrency, settings=es,
                                benchmark="validation", adapter=arm.adapter))
    result = paired(reports[0], reports[1], es)
    out = GateReport(turns=settings.turns, samples=settings.samples, tasks=len(problems), metric=result.metric,
                     comparison=result.to_dict())
    for t, d in enumerate(result.deltas[result.metric]):
        if d is not None:
            out.per_turn.append({"turn": t, "current": d.a, "candidate": d.b, "delta": d.delta,
                                 "low": d.lo, "high": d.hi})
    expected = len(problems) * settings.samples
    problems_found = [m for m in (_incomplete(r, expected) for r in reports) if m]
    out.incomplete = {"reasons": problems_found}
    out.promote, out.reason = decide(result, settings, problems_found)
    return out


def decide(result: Any, settings: GateSettings, incomplete: list[str] | None = None) -> tuple[bool, str]:
    """(promote, why) from a `trainer.eval.evaluate.compare` result."""
    if incomplete:
        return False, "unreliable: " + "; ".join(incomplete)
    d = result.verdict
    if d.delta is None or d.lo is None or d.hi is None:
        return False, f"{result.metric} at turn {result.turn} is undefined on these tasks"
    where = (f"{result.metric} at turn {result.turn}: {d.b:.3f} vs {d.a:.3f} (delta {d.delta:+.3f}, "
             f"{result.confidence:.0%} interval [{d.lo:+.3f}, {d.hi:+.3f}], {result.pairs} pairs)")
    if not result.not_worse:
        return False, f"worse: {where}"
    if d.delta < -settings.max_mean_drop:
        return False, f"mean drop above {settings.max_mean_drop:g}: {where}"
    return True, f"not worse within the interval: {where}"
