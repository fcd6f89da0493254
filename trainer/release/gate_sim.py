"""How often the promotion gate promotes a candidate of a known true difference, by
simulation with the evaluation's own paired bootstrap (`trainer.eval.bootstrap`), so the
gate's size and margin can be chosen and shown: a 10-point drop on any one of its measures
must be refused at least 90% of the time (issues 12 item 6 and 25 item 4).

The model of the data (`gate.simulation` in configs/train.yaml, read as
`trainer.train_settings.SimSettings`), per measure (`MeasureSim`): tasks differ in difficulty
(Beta with mean `base_rate` and concentration `task_concentration`); on each item the reference
succeeds with its task's rate; the candidate differs from the reference on a share
`discordance` of the items (greedy adapters agree on most tasks), the differences split so that
the candidate's rate is the reference's minus `delta`. Clusters are tasks with the given item
counts, as in the gate: the repair items several per task, the natural tasks one session each.
The natural last-turn pair is the turn-0 pair with the same tasks' turn-0 failures fixed for
both models (`fix_rate`), so its two measures are as correlated as measured.

A drop on one measure is refused when that measure's interval says so (any measure refuses),
so `promote_rate` of each measure alone bounds the gate's refusal from below; `equal_promote_rate`
simulates all three measures of an equal candidate together against one reference (with a
current adapter too the gate needs both, so it promotes no more often). Seeded; 400 runs of
one measure take a second or two.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from trainer.eval.bootstrap import DEFAULT, Delta, paired_intervals
from trainer.release.gate_settings import MeasureSim, NaturalSim, SimSettings

Counts = tuple[np.ndarray, np.ndarray, np.ndarray]


def last_turn(natural: NaturalSim) -> MeasureSim:
    """The last-turn Pass@1 measure implied by the turn-0 one and the shared fix rate: a task
    failed at turn 0 is fixed with `fix_rate`, the same tasks for both models."""
    f = natural.fix_rate
    return MeasureSim(
        base_rate=natural.base_rate + (1 - natural.base_rate) * f,
        discordance=natural.discordance * (1 - f),
        task_concentration=natural.task_concentration,
    )


def measures(
    sim: SimSettings, repair_sizes: Sequence[int], natural_tasks: int
) -> dict[str, tuple[list[int], MeasureSim]]:
    """{measure: (items per task, its data model)} for the gate's three measures."""
    natural = [1] * natural_tasks
    return {
        "repair_fix_rate": (list(repair_sizes), sim.repair),
        "natural_pass_turn0": (natural, sim.natural),
        "natural_pass_last": (natural, last_turn(sim.natural)),
    }


def _flips(rng: np.random.Generator, sizes: np.ndarray, delta: float, m: MeasureSim) -> tuple[np.ndarray, ...]:
    """(task of each item, reference outcome per item, candidate outcome per item)."""
    a = m.base_rate * m.task_concentration
    q = rng.beta(a, m.task_concentration - a, size=len(sizes))
    task = np.repeat(np.arange(len(sizes)), sizes)
    ref = rng.random(task.size) < q[task]
    lose = (m.discordance + delta) / 2 / m.base_rate  # P(candidate fails | reference succeeds)
    gain = (m.discordance - delta) / 2 / (1 - m.base_rate)  # P(candidate succeeds | reference fails)
    if not (0 <= lose <= 1 and 0 <= gain <= 1):
        raise ValueError(f"a difference of {delta} does not fit discordance {m.discordance} at rate {m.base_rate}")
    cand = ref ^ (rng.random(task.size) < np.where(ref, lose, gain))
    return task, ref, cand


def _count(task: np.ndarray, x: np.ndarray, tasks: int) -> np.ndarray:
    return np.bincount(task, weights=x.astype(float), minlength=tasks)[:, None]


def _pair(rng: np.random.Generator, sizes: np.ndarray, delta: float, m: MeasureSim) -> Counts:
    """Per-task (successes of the reference, of the candidate, items) for one simulated run."""
    task, ref, cand = _flips(rng, sizes, delta, m)
    return _count(task, ref, len(sizes)), _count(task, cand, len(sizes)), sizes.astype(float)[:, None]


def deltas(
    sizes: Sequence[int], delta: float, m: MeasureSim, sim: SimSettings, confidence: float = DEFAULT.confidence
) -> Iterator[Delta]:
    """The paired (candidate - reference) estimate of each simulated run, for a candidate
    `delta` worse than the reference (negative: better), `sizes` items per task."""
    rng = np.random.default_rng(sim.seed)
    sizes_arr = np.asarray(sizes, dtype=int)
    for k in range(sim.simulations):
        ref, cand, den = _pair(rng, sizes_arr, delta, m)
        yield paired_intervals(ref, den, cand, den, resamples=sim.resamples, confidence=confidence, seed=k)[0]


def promote_rate(
    sizes: Sequence[int],
    delta: float,
    margin: float,
    m: MeasureSim,
    sim: SimSettings,
    confidence: float = DEFAULT.confidence,
) -> float:
    """Share of simulated runs in which one measure passes: its interval's lower end above -margin."""
    runs = list(deltas(sizes, delta, m, sim, confidence))
    return sum(d.lo is not None and d.lo > -margin for d in runs) / len(runs)


def _passes(d: Delta, margin: float) -> bool:
    return d.lo is not None and d.lo > -margin


def equal_promote_rate(
    repair_sizes: Sequence[int],
    natural_tasks: int,
    margin: float,
    sim: SimSettings,
    confidence: float = DEFAULT.confidence,
) -> float:
    """Share of simulated runs in which a candidate truly equal to the reference on every
    measure passes all three (the repair items independent of the natural tasks; the natural
    turn-0 and last-turn intervals from one bootstrap, as `trainer.eval.paired.compare` makes them)."""
    rng = np.random.default_rng(sim.seed)
    sizes = np.asarray(repair_sizes, dtype=int)
    ones = np.ones(natural_tasks, dtype=int)
    passed = 0
    for k in range(sim.simulations):
        ref, cand, den = _pair(rng, sizes, 0.0, sim.repair)
        repair = paired_intervals(ref, den, cand, den, resamples=sim.resamples, confidence=confidence, seed=k)[0]
        task, ref0, cand0 = _flips(rng, ones, 0.0, sim.natural)
        fixed = rng.random(natural_tasks) < sim.natural.fix_rate  # the same tasks for both models
        ref_n = np.hstack([_count(task, ref0, natural_tasks), _count(task, ref0 | fixed, natural_tasks)])
        cand_n = np.hstack([_count(task, cand0, natural_tasks), _count(task, cand0 | fixed, natural_tasks)])
        den_n = np.ones_like(ref_n)
        natural = paired_intervals(ref_n, den_n, cand_n, den_n, resamples=sim.resamples, confidence=confidence, seed=k)
        passed += all(_passes(d, margin) for d in (repair, *natural))
    return passed / sim.simulations
