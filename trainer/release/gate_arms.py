"""What each arm of the gate did with the feedback (issue 47): descriptive measures, not gating
ones, read from the runs the gate already made, so that a gate says by itself what the
must-shows ask beside its three paired measures.

Per arm (the base, the current adapter, the candidate):

- `natural_fixed`: of its own turn-0 failures on the natural tasks, the share a later turn
  fixed (the fix rate at the last turn, `trainer.eval.eval_metrics`);
- `natural_unchanged`: of its feedback turns on the natural tasks, the share that give the
  previous program back unchanged (turns 1..T-1 pooled), and `natural_unchanged_by_turn` the same
  for each of those turns (the 1.5B changes most first feedback replies, then repeats the changed
  program: the turns differ);
- `repair_unchanged` and `repair_no_code`: of its replies to the seeded bugs with feedback, the
  share that repeat the buggy program and the share without a program (the gate's turn).

Each is an `Estimate` (num, den, the evaluation's interval) as a dict; an arm whose runs did not
finish still gets what they counted (the decision says they are incomplete).
"""

from __future__ import annotations

from typing import Any, Sequence

from trainer.eval.bootstrap import Estimate, ratio_intervals
from trainer.eval.eval_report import EvalReport
from trainer.repair.repair_metrics import RepairOutcome, counts

# measure -> the column header of `arms_table`
ARM_MEASURES = {
    "natural_fixed": "own turn-0 failures fixed by feedback",
    "natural_unchanged": "feedback turns unchanged",
    "repair_unchanged": "seeded-bug replies unchanged",
    "repair_no_code": "seeded-bug replies without code",
}


def _repair_rate(outcomes: Sequence[RepairOutcome], metric: str, turn: int, boot: dict[str, Any]) -> Estimate:
    num, den = counts(outcomes, metric, turn)
    return ratio_intervals(num[:, turn : turn + 1], den[:, turn : turn + 1], **boot)[0]


def arm_measures(
    natural: EvalReport, feedback: Sequence[RepairOutcome], turn: int, boot: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """The four measures of one arm (module doc): its natural report, its repair outcomes with
    feedback (every benchmark pooled), the gate's repair turn, the bootstrap's settings."""
    fixed = natural.metrics["fix_rate"][-1] if natural.turns > 1 else None
    unchanged = natural.overall.get("unchanged_rate")
    out = {
        "natural_fixed": fixed,
        "natural_unchanged": unchanged,
        "repair_unchanged": _repair_rate(feedback, "unchanged_rate", turn, boot),
        "repair_no_code": _repair_rate(feedback, "no_code_rate", turn, boot),
    }
    found: dict[str, Any] = {k: e.to_dict() for k, e in out.items() if e is not None}
    found["natural_unchanged_by_turn"] = [e.to_dict() for e in natural.metrics["unchanged_rate"][1:] if e is not None]
    return found


def _cell(e: dict[str, Any] | None) -> str:
    if not e or e.get("value") is None:
        return "-"
    return f"{e['num']:.0f}/{e['den']:.0f}, {e['value']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}]"


def _by_turn(arm: dict[str, Any]) -> str:
    turns = arm.get("natural_unchanged_by_turn") or []
    parts = [f"turn {t} {e['num']:.0f}/{e['den']:.0f}" for t, e in enumerate(turns, 1)]
    return "; " + ", ".join(parts) if parts else ""


def arms_table(decision: dict[str, Any]) -> str:
    """The decision's per-arm measures as a markdown table (empty when it has none)."""
    arms = decision.get("arms") or {}
    if not arms:
        return ""
    lines = [
        "| arm | " + " | ".join(ARM_MEASURES.values()) + " |",
        "|---|" + "---|" * len(ARM_MEASURES),
    ]
    for label, a in arms.items():
        cells = " | ".join(_cell(a.get(m)) + (_by_turn(a) if m == "natural_unchanged" else "") for m in ARM_MEASURES)
        lines.append(f"| {label} ({a.get('name', label)}) | {cells} |")
    return "\n".join(lines)
