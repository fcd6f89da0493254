"""How often the promotion gate promotes a candidate of a known true difference, by
simulation with the evaluation's own paired bootstrap (`trainer.eval.bootstrap`), so the
gate's size and margin can be chosen and shown: a 10-point drop must be refused at least
90% of the time (issue 12 item 6).

The model of the data (`gate.simulation` in configs/train.yaml, read as
`trainer.train_settings.SimSettings`): tasks differ in difficulty (Beta with mean `base_rate` and
concentration `task_concentration`); on each item the reference succeeds with its task's
rate; the candidate differs from the reference on a share `discordance` of the items, the
differences split so that the candidate's rate is the reference's minus `delta`. Clusters are
tasks with the given item counts, as in the gate. Seeded; a few hundred simulations take a second or two.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from trainer.eval.bootstrap import DEFAULT, Delta, paired_intervals
from trainer.train_settings import SimSettings


def _pair(rng: np.random.Generator, sizes: np.ndarray, delta: float, sim: SimSettings) -> tuple[np.ndarray, ...]:
    """Per-task (successes of the reference, of the candidate, items) for one simulated run."""
    a = sim.base_rate * sim.task_concentration
    q = rng.beta(a, sim.task_concentration - a, size=len(sizes))
    task = np.repeat(np.arange(len(sizes)), sizes)
    ref = rng.random(task.size) < q[task]
    lose = (sim.discordance + delta) / 2 / sim.base_rate  # P(candidate fails | reference succeeds)
    gain = (sim.discordance - delta) / 2 / (1 - sim.base_rate)  # P(candidate succeeds | reference fails)
    if not (0 <= lose <= 1 and 0 <= gain <= 1):
        raise ValueError(f"a difference of {delta} does not fit discordance {sim.discordance} at rate {sim.base_rate}")
    flip = rng.random(task.size) < np.where(ref, lose, gain)
    cand = ref ^ flip
    count = lambda x: np.bincount(task, weights=x.astype(float), minlength=len(sizes))[:, None]  # noqa: E731
    return count(ref), count(cand), sizes.astype(float)[:, None]


def deltas(
    sizes: Sequence[int], delta: float, sim: SimSettings, confidence: float = DEFAULT.confidence
) -> Iterator[Delta]:
    """The paired (candidate - reference) estimate of each simulated run, for a candidate
    `delta` worse than the reference (negative: better), `sizes` items per task."""
    rng = np.random.default_rng(sim.seed)
    sizes_arr = np.asarray(sizes, dtype=int)
    for k in range(sim.simulations):
        ref, cand, den = _pair(rng, sizes_arr, delta, sim)
        yield paired_intervals(ref, den, cand, den, resamples=sim.resamples, confidence=confidence, seed=k)[0]


def promote_rate(
    sizes: Sequence[int], delta: float, margin: float, sim: SimSettings, confidence: float = DEFAULT.confidence
) -> float:
    """Share of simulated runs the gate promotes: the interval's lower end above -margin."""
    runs = list(deltas(sizes, delta, sim, confidence))
    return sum(d.lo is not None and d.lo > -margin for d in runs) / len(runs)
