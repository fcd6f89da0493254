"""The repair benchmark's report: every (item, arm) outcome, per-arm metrics per turn with
bootstrap intervals, the in-run paired difference "with feedback - blind control" (the
same items, so the control's share of a fix is taken out), a markdown table, the
per-item list, and the paired comparison of two reports (`eval compare`, paired by item id
and arm). Intervals are the evaluation's own (`trainer.eval.bootstrap`, over tasks).
Saved as JSON with `"kind": "repair"`, so `eval compare` can tell it from a Pass@1 report.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from assistant.settings import BootstrapSection, EvalSection
from trainer.eval.bootstrap import Delta, Estimate, paired_intervals, ratio_intervals
from trainer.eval.paired import verdict_words
from trainer.repair.repair_metrics import ARMS, LABELS, METRICS, RepairOutcome, counts

KIND = "repair"


def _boot(settings: EvalSection) -> dict[str, Any]:
    """The bootstrap's keyword arguments (resamples, confidence, seed) from the `eval:` section."""
    return settings.bootstrap.model_dump()


def paired(
    a: Sequence[RepairOutcome], b: Sequence[RepairOutcome], metric: str, turns: int, settings: EvalSection
) -> list[Delta]:
    """B - A per turn 0..turns on the outcomes whose item is in both (rows: tasks)."""
    shared = {o.item for o in a if o.counted} & {o.item for o in b if o.counted}
    a = [o for o in a if o.item in shared]
    b = [o for o in b if o.item in shared]
    tasks = list(dict.fromkeys(o.task for o in a))
    return paired_intervals(*counts(a, metric, turns, tasks), *counts(b, metric, turns, tasks), **_boot(settings))


@dataclass
class RepairReport:
    benchmark: str
    split: str
    model: str
    turns: int
    wording: str
    outcomes: list[RepairOutcome]
    items: list[str]
    adapter: str | None = None
    wall_s: float = 0.0
    aborted: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    created_at: float = field(default_factory=time.time)
    eval_settings: EvalSection = field(default_factory=EvalSection, repr=False)

    @property
    def arms(self) -> list[str]:
        return [a for a in ARMS if any(o.arm == a for o in self.outcomes)]

    def arm(self, name: str) -> list[RepairOutcome]:
        return [o for o in self.outcomes if o.arm == name]

    @property
    def label(self) -> str:
        return f"{self.model} ({self.wording})"

    def metrics(self) -> dict[str, dict[str, list[Estimate]]]:
        """{arm: {metric: estimates for turns 0..T}} (turn 0 counts nothing)."""
        return {
            arm: {
                m: ratio_intervals(*counts(self.arm(arm), m, self.turns), **_boot(self.eval_settings)) for m in METRICS
            }
            for arm in self.arms
        }

    def feedback_minus_blind(self) -> dict[str, list[Delta]]:
        if set(self.arms) != set(ARMS):
            return {}
        return {m: paired(self.arm("blind"), self.arm("feedback"), m, self.turns, self.eval_settings) for m in METRICS}

    def invalid(self) -> list[str]:
        return sorted({o.item for o in self.outcomes if not o.valid and not o.errored})

    def errored(self) -> list[str]:
        """The (item, arm) sessions that ended on an error, as `item/arm`: counted nowhere."""
        return [f"{o.item}/{o.arm}" for o in self.outcomes if o.errored]

    def to_dict(self) -> dict[str, Any]:
        def estimates(values: list[Any]) -> list[dict[str, Any]]:
            return [{"turn": t, **v.to_dict()} for t, v in enumerate(values) if t >= 1]

        return {
            "kind": KIND,
            "benchmark": self.benchmark,
            "split": self.split,
            "model": self.model,
            "adapter": self.adapter,
            "turns": self.turns,
            "wording": self.wording,
            "items": self.items,
            "invalid_items": self.invalid(),
            "errored_sessions": self.errored(),
            "wall_s": round(self.wall_s, 1),
            "aborted": self.aborted,
            "settings": self.settings,
            "created_at": self.created_at,
            "bootstrap": _boot(self.eval_settings),
            "metrics": {arm: {m: estimates(v) for m, v in by.items()} for arm, by in self.metrics().items()},
            "feedback_minus_blind": {m: estimates(v) for m, v in self.feedback_minus_blind().items()},
            "outcomes": [o.to_dict() for o in self.outcomes],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RepairReport":
        if data.get("kind") != KIND:
            raise ValueError("not a repair benchmark report")
        es = EvalSection(bootstrap=BootstrapSection.model_validate(data.get("bootstrap") or {}))
        return cls(
            benchmark=data["benchmark"],
            split=data["split"],
            model=data["model"],
            turns=int(data["turns"]),
            wording=data["wording"],
            outcomes=[RepairOutcome.from_dict(o) for o in data["outcomes"]],
            items=list(data["items"]),
            adapter=data.get("adapter"),
            wall_s=float(data.get("wall_s", 0)),
            aborted=data.get("aborted"),
            settings=dict(data.get("settings") or {}),
            created_at=float(data.get("created_at", 0)),
            eval_settings=es,
        )

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        return path

    @classmethod
    def load(cls, path: Path) -> "RepairReport":
        return cls.from_dict(json.loads(Path(path).read_text()))


def is_repair_report(path: Path) -> bool:
    try:
        return json.loads(Path(path).read_text()).get("kind") == KIND
    except (OSError, ValueError, AttributeError):
        return False


def _est(e: Estimate) -> str:
    return "n/a" if e.value is None else f"{e.value:.3f} [{e.lo:.3f}, {e.hi:.3f}] ({e.num}/{e.den})"


def _delta(d: Delta) -> str:
    if d.delta is None or d.lo is None or d.hi is None:
        return "n/a"
    return f"{d.a:.3f} -> {d.b:.3f}: {d.delta:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}]"


def table(report: RepairReport) -> str:
    """Per-turn metrics per arm, the feedback - blind difference, then every item's outcome."""
    by_arm = report.metrics()
    valid = len({o.item for o in report.outcomes if o.counted})
    lines = [
        f"{report.label} on {report.benchmark} ({report.split}): {valid} items, {report.turns} turn(s) "
        f"after the buggy program; {report.eval_settings.bootstrap.confidence:.0%} bootstrap intervals "
        "over tasks.",
        "",
        "| turn | arm | " + " | ".join(LABELS[m] for m in METRICS) + " |",
        "|---:|---|" + "---|" * len(METRICS),
    ]
    for t in range(1, report.turns + 1):
        for arm, by in by_arm.items():
            lines.append(f"| {t} | {arm} | " + " | ".join(_est(by[m][t]) for m in METRICS) + " |")
    diff = report.feedback_minus_blind()
    if diff:
        lines += ["", "With feedback - blind control (paired by item; blind -> feedback):"]
        lines += [
            f"- turn {t}: fix rate {_delta(diff['fix_rate'][t])}; unchanged {_delta(diff['unchanged_rate'][t])}"
            for t in range(1, report.turns + 1)
        ]
    lines += ["", "Items (" + ", ".join(report.arms) + "):"]
    verdicts: dict[str, dict[str, str]] = {}
    for o in report.outcomes:
        verdicts.setdefault(o.item, {})[o.arm] = o.verdict()
    lines += [
        f"- {item}: " + "; ".join(f"{arm} {v}" for arm, v in verdicts.get(item, {}).items()) for item in report.items
    ]
    return "\n".join(lines)


def compare(
    a: RepairReport, b: RepairReport, margin: float = 0.0, metric: str = "fix_rate", turn: int | None = None
) -> dict[str, Any]:
    """B - A per arm, metric and turn, paired by item id (and arm); `not_worse` on the feedback
    arm's `metric` at `turn` (1..T, negative from the end; default the last): the interval's upper
    end is at least -margin."""
    if a.turns != b.turns:
        raise ValueError(f"the reports have different turn counts ({a.turns} and {b.turns})")
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r} for repair reports; use one of {', '.join(METRICS)}")
    turn = a.turns if turn is None else turn
    if not (1 <= turn <= a.turns or -a.turns <= turn <= -1):
        raise ValueError(f"turn {turn} is outside these reports' model turns (1..{a.turns}, or -1 for the last)")
    turn = turn if turn > 0 else a.turns + 1 + turn
    shared = {o.key for o in a.outcomes} & {o.key for o in b.outcomes}
    if not shared:
        raise ValueError("the reports share no (item, arm) pair; run both on the same items")
    out: dict[str, Any] = {"a": a.label, "b": b.label, "pairs": len(shared), "deltas": {}}
    for arm in [x for x in ARMS if x in a.arms and x in b.arms]:
        out["deltas"][arm] = {m: paired(a.arm(arm), b.arm(arm), m, a.turns, a.eval_settings) for m in METRICS}
    arm = "feedback" if "feedback" in out["deltas"] else next(iter(out["deltas"]))
    last = out["deltas"][arm][metric][turn]
    out["verdict"] = {
        "arm": arm,
        "metric": metric,
        "turn": turn,
        "margin": margin,
        **last.to_dict(),
        "not_worse": last.hi is not None and last.hi >= -margin,
    }
    return out


def comparison_table(result: dict[str, Any], turns: int) -> str:
    lines = [
        f"A = {result['a']}, B = {result['b']}: {result['pairs']} paired (item, arm).",
        "",
        "| turn | arm | " + " | ".join(LABELS[m] for m in METRICS) + " |",
        "|---:|---|" + "---|" * len(METRICS),
    ]
    for t in range(1, turns + 1):
        for arm, by in result["deltas"].items():
            lines.append(f"| {t} | {arm} | " + " | ".join(_delta(by[m][t]) for m in METRICS) + " |")
    v = result["verdict"]
    lines += [
        "",
        f"Verdict on the {v['arm']} arm's {LABELS[v['metric']]} at turn {v['turn']}: B is "
        f"{verdict_words(v.get('lo'), v.get('hi'), v['margin'])} A (margin {v['margin']:g}).",
    ]
    return "\n".join(lines)


def comparison_json(result: dict[str, Any]) -> dict[str, Any]:
    return {
        **result,
        "deltas": {arm: {m: [d.to_dict() for d in v] for m, v in by.items()} for arm, by in result["deltas"].items()},
    }
