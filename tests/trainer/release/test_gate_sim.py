"""The gate's size and margin, by simulation with the project's own paired bootstrap: with
the configured items (the pinned val-split repair items) and margin, a candidate 10 points
worse is refused at least 90% of the time, while a 10-point improvement is promoted most
of the time; the decision rule itself (every reference, lower end above -margin)."""

from __future__ import annotations

from collections import Counter

from assistant.settings import TrainSection
from assistant.settings_loader import load_settings
from trainer.release.gate import decide, gate_items
from trainer.release.gate_sim import promote_rate
from trainer.train_settings import load_train_settings


def test_a_ten_point_drop_is_refused_at_least_90_percent() -> None:
    gs = load_train_settings(TrainSection(), "cpu-small").gate
    sim = gs.simulation
    sizes = list(Counter(i.task for i in gate_items(gs, load_settings().eval)).values())
    assert (len(sizes), sum(sizes)) == (16, 46)
    refused = 1 - promote_rate(sizes, sim.drop, gs.margin, sim, gs.confidence)
    assert refused >= sim.refuse_at_least, refused
    assert promote_rate(sizes, -0.10, gs.margin, sim, gs.confidence) >= 0.6  # a real gain usually passes
    assert 1 - promote_rate(sizes, sim.drop, gs.margin + 0.05, sim, gs.confidence) < sim.refuse_at_least


def row(reference: str, lo: float | None) -> dict:
    return {"reference": reference, "name": reference, "a": 0.3, "b": 0.3, "delta": 0.0, "lo": lo, "hi": 0.1}


def test_decision_needs_every_reference() -> None:
    assert decide([row("base", -0.05), row("current", -0.09)], 0.10)[0]
    ok, why = decide([row("base", -0.05), row("current", -0.11)], 0.10)
    assert not ok and "vs current" in why and "too low" in why
    assert not decide([row("base", None)], 0.10)[0]
    assert not decide([row("base", 0.0)], 0.10, incomplete=["the run of base was aborted"])[0]
    assert not decide([], 0.10)[0]
