"""The evaluation report: what was evaluated, every (problem, sample) outcome, and the
metrics with 95% bootstrap intervals; saved as JSON, shown as a markdown table, plotted as
a PNG of Pass@1 per turn.

The outcomes are kept in the JSON so that `trainer.eval.paired` can pair two reports
(same problems, same sample indices) without the store. Metrics are recomputed from the
outcomes by `summarise`, so a report read back from disk is complete.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from assistant.settings import BootstrapSection, EvalSection
from trainer.eval.bootstrap import Estimate, ratio_intervals
from trainer.eval.eval_metrics import METRICS, POOLED, SampleOutcome, counts, metric_names

REPORT_VERSION = 1
LABELS = {
    "pass_at_1": "Pass@1",
    "solved_by": "solved by t",
    "fix_rate": "fix rate",
    "unchanged_rate": "unchanged",
    "correct_to_wrong": "correct -> wrong",
    "hacking_rate": "hacking rate",
    "tampered_rate": "tampered",
    "flagged_rate": "flagged",
}


def summarise(
    outcomes: Sequence[SampleOutcome], horizon: int, perturbed: bool, settings: EvalSection
) -> tuple[dict[str, list[Estimate | None]], dict[str, Estimate]]:
    """(per-turn estimates by metric, None before a metric applies; pooled estimates), with the
    bootstrap of `settings.bootstrap`."""
    per_turn: dict[str, list[Estimate | None]] = {}
    overall: dict[str, Estimate] = {}
    boot = settings.bootstrap.model_dump()
    for name in metric_names(perturbed):
        num, den = counts(outcomes, name, horizon)
        first = METRICS[name][1]
        estimates = ratio_intervals(num, den, **boot)
        per_turn[name] = [e if t >= first else None for t, e in enumerate(estimates)]
        if name in POOLED:
            overall[name] = ratio_intervals(num.sum(axis=1, keepdims=True), den.sum(axis=1, keepdims=True), **boot)[0]
    return per_turn, overall


@dataclass
class EvalReport:
    """One evaluation of one model on one problem set (see the module doc)."""

    benchmark: str
    split: str
    model: str
    turns: int
    samples: int
    perturbed: bool
    outcomes: list[SampleOutcome]
    problems: list[str]
    adapter: str | None = None
    skipped: list[str] = field(default_factory=list)
    missing: list[tuple[str, int]] = field(default_factory=list)
    sessions_run: int = 0
    sessions_reused: int = 0
    wall_s: float = 0.0
    aborted: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    created_at: float = field(default_factory=time.time)
    eval_settings: EvalSection = field(default_factory=EvalSection, repr=False)
    metrics: dict[str, list[Estimate | None]] = field(init=False, repr=False)
    """Per-turn estimates by metric (None before the metric applies), from `summarise`."""
    overall: dict[str, Estimate] = field(init=False, repr=False)
    """Turns 1..T-1 pooled, for the per-turn rates."""

    def __post_init__(self) -> None:
        self.metrics, self.overall = summarise(self.outcomes, self.turns, self.perturbed, self.eval_settings)

    @property
    def complete(self) -> bool:
        return not self.missing and self.aborted is None

    def value(self, metric: str, turn: int = -1) -> float | None:
        estimate = self.metrics[metric][turn]
        return estimate.value if estimate else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": REPORT_VERSION,
            "benchmark": self.benchmark,
            "split": self.split,
            "model": self.model,
            "adapter": self.adapter,
            "turns": self.turns,
            "samples": self.samples,
            "perturbed": self.perturbed,
            "problems": self.problems,
            "skipped_unperturbable": {"count": len(self.skipped), "ids": self.skipped},
            "missing": [list(m) for m in self.missing],
            "sessions_run": self.sessions_run,
            "sessions_reused": self.sessions_reused,
            "wall_s": round(self.wall_s, 1),
            "aborted": self.aborted,
            "created_at": self.created_at,
            "settings": self.settings,
            "bootstrap": self.eval_settings.bootstrap.model_dump(),
            "metrics": {
                name: [{"turn": t, **e.to_dict()} if e else None for t, e in enumerate(values)]
                for name, values in self.metrics.items()
            },
            "overall": {name: e.to_dict() for name, e in self.overall.items()},
            "outcomes": [o.to_dict() for o in self.outcomes],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EvalReport":
        if data.get("version") != REPORT_VERSION:
            raise ValueError(f"report version {data.get('version')!r} is not {REPORT_VERSION}")
        settings = EvalSection(bootstrap=BootstrapSection.model_validate(data.get("bootstrap") or {}))
        return cls(
            benchmark=data["benchmark"],
            split=data["split"],
            model=data["model"],
            adapter=data.get("adapter"),
            turns=int(data["turns"]),
            samples=int(data["samples"]),
            perturbed=bool(data["perturbed"]),
            problems=list(data["problems"]),
            outcomes=[SampleOutcome.from_dict(o) for o in data["outcomes"]],
            skipped=list((data.get("skipped_unperturbable") or {}).get("ids") or []),
            missing=[(m[0], int(m[1])) for m in data.get("missing") or []],
            sessions_run=int(data.get("sessions_run", 0)),
            sessions_reused=int(data.get("sessions_reused", 0)),
            wall_s=float(data.get("wall_s", 0.0)),
            aborted=data.get("aborted"),
            settings=dict(data.get("settings") or {}),
            created_at=float(data.get("created_at", 0.0)),
            eval_settings=settings,
        )

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "EvalReport":
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path} is not an evaluation report ({exc})") from None

    @property
    def label(self) -> str:
        return self.model + (" (perturbed)" if self.perturbed else "")


# merging: the fields the reports must share, those whose lists are joined, those added up
_ALIKE = ("model", "adapter", "turns", "samples", "perturbed", "split")
_JOINED = ("outcomes", "problems", "skipped", "missing")
_ADDED = ("sessions_run", "sessions_reused", "wall_s")
_PER_RUN = {"concurrency", "session_statuses", "merged_from"}  # settings that may differ between the parts


def merge(reports: Sequence[EvalReport]) -> EvalReport:
    """One report of the same model on the union of disjoint problem sets (for instance a set
    evaluated in two parts); ValueError, one sentence, when the reports differ in model, adapter,
    turns, samples, perturbation, split or a sampling setting (temperature, seeds, ...), or share a
    (problem, sample) pair. Metrics are
    recomputed from the outcomes; wall time and session counts add up."""
    if len(reports) < 2:
        raise ValueError("merging needs two or more reports")
    first = reports[0]
    for name in _ALIKE:
        values = {repr(getattr(r, name)) for r in reports}
        if len(values) > 1:
            raise ValueError(f"the reports differ in {name} ({', '.join(sorted(values))}); merge only like with like")
    shared = set.intersection(*(set(r.settings) for r in reports))  # a report merged by older code has fewer
    for name in sorted(shared - _PER_RUN):
        values = {repr(r.settings.get(name)) for r in reports}
        if len(values) > 1:
            raise ValueError(f"the reports differ in {name} ({', '.join(sorted(values))}); merge only like with like")
    keys = [o.key for r in reports for o in r.outcomes]
    if len(set(keys)) < len(keys):
        raise ValueError("the reports share a (problem, sample) pair; merge reports of disjoint problems only")
    aborted = [r.aborted for r in reports if r.aborted]
    return EvalReport(
        benchmark="+".join(r.benchmark for r in reports),
        **{name: getattr(first, name) for name in _ALIKE},
        **{name: [x for r in reports for x in getattr(r, name)] for name in _JOINED},
        **{name: sum(getattr(r, name) for r in reports) for name in _ADDED},
        aborted="; ".join(aborted) or None,
        settings={
            **{k: v for k, v in first.settings.items() if k not in _PER_RUN},  # the same in every part
            "merged_from": [{"benchmark": r.benchmark, **r.settings} for r in reports],
        },
        eval_settings=first.eval_settings,
    )


def cell(e: Estimate | None, digits: int = 3) -> str:
    """'0.305 [0.207, 0.402]', '-' before a metric applies, 'n/a' when nothing was counted."""
    if e is None:
        return "-"
    if e.value is None:
        return "n/a"
    return f"{e.value:.{digits}f} [{e.lo:.{digits}f}, {e.hi:.{digits}f}]"


def table(report: EvalReport) -> str:
    """The per-turn markdown table, then the pooled rates."""
    names = list(report.metrics)
    lines = ["| turn | " + " | ".join(LABELS[n] for n in names) + " |", "|---:|" + "---|" * len(names)]
    for t in range(report.turns):
        lines.append(f"| {t} | " + " | ".join(cell(report.metrics[n][t]) for n in names) + " |")
    pooled = ", ".join(f"{LABELS[n]} {cell(e)} ({e.num}/{e.den} turns)" for n, e in report.overall.items())
    return "\n".join(lines) + f"\n\nTurns 1..{report.turns - 1} pooled: {pooled}"


def describe(report: EvalReport) -> str:
    """One paragraph: what was evaluated, how many sessions ran or were reused, wall time."""
    n = len(report.problems)
    text = (
        f"{report.label} on {report.benchmark} ({report.split} split): {n} problems x "
        f"{report.samples} sample(s), {report.turns} turns; {len(report.outcomes)} sessions graded "
        f"({report.sessions_run} run now, {report.sessions_reused} reused from the store) "
        f"in {report.wall_s:.0f} s."
    )
    if report.perturbed:
        text += f" {len(report.skipped)} problem(s) skipped: no two distinct public outputs to swap."
    if report.missing:
        text += f" {len(report.missing)} (problem, sample) pair(s) have no finished session."
    return text


def plot(reports: Sequence[EvalReport], path: str | Path, title: str | None = None) -> Path:
    """A PNG of Pass@1 per turn (95% intervals as error bars) and solved-by-turn, per report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), dpi=110)
    for i, report in enumerate(reports):
        colour = f"C{i}"
        for metric, style in (("pass_at_1", "-o"), ("solved_by", "--")):
            points = [(t, e) for t, e in enumerate(report.metrics[metric]) if e and e.value is not None]
            if not points:
                continue
            xs = [t for t, _ in points]
            ys = [e.value for _, e in points]
            label = f"{report.label}: {LABELS[metric]}"
            if metric == "pass_at_1":
                err = [[y - e.lo for y, (_, e) in zip(ys, points)], [e.hi - y for y, (_, e) in zip(ys, points)]]
                ax.errorbar(xs, ys, yerr=err, fmt=style, color=colour, capsize=4, label=label)
            else:
                ax.plot(xs, ys, style, color=colour, alpha=0.6, label=label)
    ax.set_xlabel("turn")
    ax.set_ylabel("share of (problem, sample)")
    ax.set_xticks(range(max((r.turns for r in reports), default=1)))
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    first = reports[0] if reports else None
    ax.set_title(title or (f"Multi-turn Pass@1 on {first.benchmark} ({first.split})" if first else ""), fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
