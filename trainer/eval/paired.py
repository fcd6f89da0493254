"""Paired comparison of two evaluation reports (A = baseline, B = candidate).

Only the (problem, sample index) pairs present in both reports count; every metric is
recomputed on them and the per-turn difference B - A gets a paired bootstrap interval (the
same problems resampled for both). The verdict `not_worse` looks at one metric and turn
(configs/eval.yaml `compare:`, default Pass@1 at the last turn): B is not worse when the
upper end of the interval of B - A is at least -margin, i.e. the data do not show B worse
than A by more than the margin. The retraining gate calls `compare`; it promotes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assistant.settings import EvalSection
from trainer.eval.bootstrap import Delta, paired_intervals
from trainer.eval.eval_metrics import METRICS, POOLED, counts, metric_names
from trainer.eval.eval_report import LABELS, EvalReport


class CompareError(ValueError):
    """The two reports cannot be paired; the message says why."""


# The fields of a ComparisonReport that its dict holds as they are, in their order there.
PLAIN_FIELDS = ("a", "b", "turns", "perturbed", "problems", "pairs", "unpaired_a", "unpaired_b", "confidence")


@dataclass
class ComparisonReport:
    a: str
    b: str
    turns: int
    perturbed: bool
    problems: int
    pairs: int
    unpaired_a: int
    unpaired_b: int
    deltas: dict[str, list[Delta | None]]
    overall: dict[str, Delta]
    metric: str
    turn: int
    margin: float
    confidence: float
    not_worse: bool

    @property
    def verdict(self) -> Delta:
        found = self.deltas[self.metric][self.turn]
        assert found is not None
        return found

    def to_dict(self) -> dict[str, Any]:
        return {
            **{name: getattr(self, name) for name in PLAIN_FIELDS},
            "deltas": {
                n: [{"turn": t, **d.to_dict()} if d else None for t, d in enumerate(v)] for n, v in self.deltas.items()
            },
            "overall": {n: d.to_dict() for n, d in self.overall.items()},
            "verdict": {
                "metric": self.metric,
                "turn": self.turn,
                "margin": self.margin,
                **self.verdict.to_dict(),
                "not_worse": self.not_worse,
            },
        }


def compare(
    a: EvalReport,
    b: EvalReport,
    settings: EvalSection | None = None,
    *,
    metric: str | None = None,
    turn: int | None = None,
    margin: float | None = None,
) -> ComparisonReport:
    """Paired per-turn deltas B - A with intervals, and the `not_worse` verdict (`settings`: the
    `eval:` section, its `compare:` and `bootstrap:`)."""
    settings = settings or EvalSection()
    metric = metric or settings.compare.metric
    margin = settings.compare.margin if margin is None else margin
    if a.turns != b.turns:
        raise CompareError(f"the reports have different turn counts ({a.turns} and {b.turns})")
    if a.perturbed != b.perturbed:
        raise CompareError("one report is on perturbed problems and the other is not")
    if metric not in METRICS or metric not in metric_names(a.perturbed):
        known = ", ".join(metric_names(a.perturbed))
        raise CompareError(f"unknown metric {metric!r} for these reports; use one of {known}")
    turn = settings.compare.turn if turn is None else turn
    if not -a.turns <= turn < a.turns:
        raise CompareError(
            f"turn {turn} is outside these {a.turns}-turn reports (0..{a.turns - 1}, or -1 for the last)"
        )
    turn = turn % a.turns
    if turn < METRICS[metric][1]:
        raise CompareError(f"{metric} is not defined at turn {turn}")
    keys_a, keys_b = {o.key for o in a.outcomes}, {o.key for o in b.outcomes}
    shared = keys_a & keys_b
    if not shared:
        raise CompareError("the reports share no (problem, sample) pair; evaluate both on the same problems")
    out_a = [o for o in a.outcomes if o.key in shared]
    out_b = [o for o in b.outcomes if o.key in shared]
    rows = list(dict.fromkeys(o.problem_id for o in out_a))
    boot = settings.bootstrap.model_dump()
    deltas: dict[str, list[Delta | None]] = {}
    overall: dict[str, Delta] = {}
    for name in metric_names(a.perturbed):
        na, da = counts(out_a, name, a.turns, rows)
        nb, db = counts(out_b, name, a.turns, rows)
        first = METRICS[name][1]
        deltas[name] = [d if t >= first else None for t, d in enumerate(paired_intervals(na, da, nb, db, **boot))]
        if name in POOLED:
            pooled = [x.sum(axis=1, keepdims=True) for x in (na, da, nb, db)]
            overall[name] = paired_intervals(*pooled, **boot)[0]
    hi = deltas[metric][turn].hi  # type: ignore[union-attr]
    return ComparisonReport(
        a=a.label,
        b=b.label,
        turns=a.turns,
        perturbed=a.perturbed,
        problems=len(rows),
        pairs=len(shared),
        unpaired_a=len(keys_a - shared),
        unpaired_b=len(keys_b - shared),
        deltas=deltas,
        overall=overall,
        metric=metric,
        turn=turn,
        margin=margin,
        confidence=settings.bootstrap.confidence,
        not_worse=hi is not None and hi >= -margin,
    )


def verdict_words(lo: float | None, hi: float | None, margin: float) -> str:
    """What the interval of B - A shows against -margin, in words that claim no more than it:
    "shown not worse" (its lower end above), "shown worse" (its upper end below), or "not shown
    worse" (it holds both: the lax `not_worse`, which is no evidence that B is as good)."""
    if lo is not None and lo > -margin:
        return "shown not worse than"
    if hi is not None and hi < -margin:
        return "shown worse than"
    return "not shown worse (nor shown not worse) than"


def _cell(d: Delta | None) -> str:
    if d is None:
        return "-"
    if d.delta is None or d.lo is None or d.hi is None:
        return "n/a"
    return f"{d.a:.3f} -> {d.b:.3f}: {d.delta:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}]"


def comparison_table(report: ComparisonReport) -> str:
    """Per-turn paired deltas (A -> B: B - A [interval]) as markdown, then the verdict."""
    names = list(report.deltas)
    lines = [
        f"A = {report.a}, B = {report.b}: {report.pairs} paired (problem, sample) on "
        f"{report.problems} problems; {report.confidence:.0%} paired bootstrap intervals of B - A.",
        "",
        "| turn | " + " | ".join(LABELS[n] for n in names) + " |",
        "|---:|" + "---|" * len(names),
    ]
    for t in range(report.turns):
        lines.append(f"| {t} | " + " | ".join(_cell(report.deltas[n][t]) for n in names) + " |")
    if report.overall:
        lines += [
            "",
            "Turns 1..{} pooled: ".format(report.turns - 1)
            + ", ".join(f"{LABELS[n]} {_cell(d)}" for n, d in report.overall.items()),
        ]
    if report.unpaired_a or report.unpaired_b:
        lines += ["", f"Left out (no partner): {report.unpaired_a} from A, {report.unpaired_b} from B."]
    v = report.verdict
    word = verdict_words(v.lo if v else None, v.hi if v else None, report.margin)
    lines += [
        "",
        f"Verdict on {LABELS[report.metric]} at turn {report.turn}: B is {word} A "
        f"(B - A = {_cell(v).split(': ')[-1]}, margin {report.margin:g}).",
    ]
    return "\n".join(lines)
