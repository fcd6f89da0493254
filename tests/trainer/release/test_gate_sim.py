"""The gate's size, margin and confidence, by simulation with the project's own paired bootstrap:
with the configured task counts (the val-split repair items of HumanEval and of the natural set,
and the natural val tasks, checked against what the gate loads), margin and confidence, a candidate
10 points worse on any one measure (repair fix rate, natural turn-0 Pass@1, natural last-turn
Pass@1) is refused at least 90% of the time, a 10-point improvement usually passes, the gate is
no stricter than that needs (a wider margin or a narrower interval would break the 90%), and how
often a truly equal candidate passes every measure is reported; the decision rule itself (every
measure, every reference, lower end above -margin) and its table."""

from __future__ import annotations

from collections import Counter

import pytest

from assistant.settings_loader import load_settings
from trainer.release.gate import MEASURES, decide, gate_items, gate_problems, gate_table
from trainer.release.gate_settings import GateSettings
from trainer.release.gate_sim import equal_promote_rate, measures, promote_rate
from trainer.train_settings import load_train_settings


@pytest.fixture(scope="module")
def gate() -> GateSettings:
    return load_train_settings({}, "cpu-small").gate


@pytest.fixture(scope="module")
def sizes(gate: GateSettings) -> tuple[list[int], int]:
    """(items per repair task, natural tasks) as the gate loads them, checked against the
    counts the simulation's configuration states."""
    es = load_settings().eval
    repair = list(Counter(i.task for i in gate_items(gate, es)).values())
    problems = gate_problems(gate, es)
    sim = gate.simulation
    assert (len(repair), sum(repair)) == (sim.repair.tasks, sim.repair.items) == (46, 131)  # 16 + 30 tasks
    assert sum(i.task.startswith("HumanEval/") for i in gate_items(gate, es)) == 46
    assert len(problems) == sim.natural.tasks == 46
    assert sum(p.id.startswith("HumanEval/") for p in problems) == 16  # + 30 of the natural set (12 + 4 + 2 + 12)
    return repair, len(problems)


@pytest.mark.parametrize("measure", list(MEASURES))
def test_a_ten_point_drop_on_any_measure_is_refused_at_least_90_percent(
    gate: GateSettings, sizes: tuple[list[int], int], measure: str
) -> None:
    sim = gate.simulation
    per_task, model = measures(sim, *sizes)[measure]
    refused = 1 - promote_rate(per_task, sim.drop, gate.margin, model, sim, gate.confidence)
    assert refused >= sim.refuse_at_least, f"{measure}: a {sim.drop:.0%} drop refused in only {refused:.1%} of runs"
    gain = promote_rate(per_task, -sim.drop, gate.margin, model, sim, gate.confidence)
    assert gain >= 0.6, f"{measure}: a {sim.drop:.0%} gain promoted in only {gain:.1%}"


@pytest.mark.parametrize("looser", ["margin", "confidence"])
def test_the_gate_is_no_stricter_than_90_percent_needs(
    gate: GateSettings, sizes: tuple[list[int], int], looser: str
) -> None:
    """A margin 5 points wider, or an interval 5 points narrower, would refuse a 10-point drop on
    some measure less than 90% of the time: a stricter gate than that only costs equal candidates."""
    sim = gate.simulation
    margin = gate.margin + (0.05 if looser == "margin" else 0.0)
    confidence = gate.confidence - (0.05 if looser == "confidence" else 0.0)
    refused = {
        m: 1 - promote_rate(n, sim.drop, margin, model, sim, confidence)
        for m, (n, model) in measures(sim, *sizes).items()
    }
    assert min(refused.values()) < sim.refuse_at_least, f"{looser} looser still refuses: {refused}"


def test_how_often_an_equal_candidate_passes(gate: GateSettings, sizes: tuple[list[int], int]) -> None:
    """Reported, not a requirement: the price of 90% refusal with these task counts. Each
    measure alone passes an equal candidate about half the time or more; all three together
    (turn-0 and last-turn nearly the same tasks, the repair items independent) about 37% of the
    time against one reference (docs/method.md; with a 95% interval and HumanEval's 46 repair items
    alone it was one time in nine)."""
    sim = gate.simulation
    alone = {
        m: promote_rate(n, 0.0, gate.margin, model, sim, gate.confidence)
        for m, (n, model) in measures(sim, *sizes).items()
    }
    together = equal_promote_rate(*sizes, gate.margin, sim, gate.confidence)
    report = f"an equal candidate passes: {together:.1%} of runs on all measures; alone: " + ", ".join(
        f"{m} {r:.1%}" for m, r in alone.items()
    )
    assert 0.25 <= together <= min(alone.values()), report
    assert all(0.45 <= r <= 0.8 for r in alone.values()), report


def row(reference: str, lo: float | None, measure: str = "repair_fix_rate") -> dict:
    return {
        "measure": measure,
        "reference": reference,
        "name": reference,
        "a": 0.3,
        "b": 0.3,
        "delta": 0.0,
        "lo": lo,
        "hi": 0.1,
    }


def test_decision_needs_every_reference_and_every_measure() -> None:
    assert decide([row("base", -0.05), row("current", -0.09)], 0.10)[0]
    ok, why = decide([row("base", -0.05), row("current", -0.11)], 0.10)
    assert not ok and "vs current" in why and "too low" in why
    ok, why = decide([row("base", -0.05), row("base", -0.12, "natural_pass_last")], 0.10)
    assert not ok and "natural_pass_last vs base base: 0.300 vs 0.300 (delta +0.000, 95% interval [-0.120" in why
    assert not decide([row("base", None)], 0.10)[0]
    assert not decide([row("base", None, "natural_pass_turn0")], 0.10)[1].startswith("shown")
    assert not decide([row("base", 0.0)], 0.10, incomplete=["the run of base was aborted"])[0]
    assert not decide([], 0.10)[0]


def test_the_table_has_a_row_per_measure_and_reference() -> None:
    rows = [row(r, lo, m) for m in MEASURES for r, lo in (("base", -0.05), ("current", -0.2))]
    text = gate_table({"margin": 0.1, "comparisons": rows}).splitlines()
    assert len(text) == 2 + 6 and text[2].startswith("| repair items, fix rate | base (base) | 0.300 | 0.300 |")
    assert text[3].endswith("| [-0.200, +0.100] | NO |") and text[4].startswith("| natural tasks, turn-0 Pass@1")
