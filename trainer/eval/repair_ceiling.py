"""How often the model's own sampled repairs fix its first-turn failures: pass@k of the repair
turn (issue 25, `cobalt eval ceiling`).

GRPO can only reinforce a fix that the policy samples. This measure says how much there is to
reinforce: over the stored sessions of one model on a set of tasks (typically `cobalt collect
B --split S --samples N --first-temperature 0 --temperature 1.0 --turns 2`: one greedy first
turn per task, then N sampled repairs), for each task whose first turn failed, how many of its
N repairs pass every public and every hidden test (a tampered run never counts), and from those
counts the unbiased pass@k of Chen et al. (2021), 1 - C(n-c, k) / C(n, k), averaged over the
failed tasks with a bootstrap interval over tasks. A failure whose program passed the public
tests gets no repair turn (the loop stops), so it counts as not fixed, as in evaluation.

A greedy repair can fix a task only where some sampled repair does, to the extent sampling
finds it: pass@k for large k bounds what sharpening the policy can turn into greedy fixes on
these tasks. `best_of_k` is what a user would get from k repairs tried at once with the one
passing the most public tests kept (the first on ties): the first k repairs of each task in
the order they were stored, fixed when the kept one passes every test. Only sessions collected
with that recipe count (their stored sampling says so; an ordinary greedy or sampled collection
of the same model in the same store is left out). Reads the store only.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field
from math import comb
from typing import Any, Iterable, Sequence

import numpy as np

from assistant.settings import BootstrapSection, LoopSettings
from assistant.store.trajectory import PASSED, UNSOLVED
from assistant.store.trajectory_db import Store
from trainer.eval.bootstrap import ratio_intervals

FINISHED = (PASSED, UNSOLVED)


@dataclass
class TaskRepairs:
    """One task's sessions: how many, and the repair (turn 1) of each whose turn 0 failed, in
    stored order, as (its public pass rate, whether it passed every test untampered); a session
    that stopped after turn 0 has (-1, False)."""

    problem: str
    sessions: int = 0
    repairs: list[tuple[float, bool]] = field(default_factory=list)

    @property
    def first_failed(self) -> int:
        """Sessions whose turn 0 did not pass every test."""
        return len(self.repairs)

    @property
    def fixed(self) -> int:
        return sum(solved for _, solved in self.repairs)

    def best_of(self, k: int) -> bool:
        """Of the first k repairs, does the one with the most public tests passed (the first on
        ties) pass every test?"""
        first = self.repairs[:k]
        return bool(first) and max(first, key=lambda r: r[0])[1]


@dataclass
class Ceiling:
    tasks: int
    failed_tasks: int
    samples: int  # repairs per failed task (the smallest count among them)
    confidence: float = 0.95
    pass_at_k: dict[int, dict[str, float | None]] = field(default_factory=dict)
    best_of_k: dict[int, dict[str, float | None]] = field(default_factory=dict)
    fixed_by_any: int = 0  # failed tasks with at least one passing repair
    per_task: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # the k keys become strings in JSON


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples of which c pass (k <= n)."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, got {n}")
    return 1.0 - comb(n - c, k) / comb(n, k)


def _solved(row: Any) -> bool:
    return row["public_pass_rate"] >= 1.0 and row["hidden_pass_rate"] >= 1.0 and not row["tampered"]


def task_repairs(
    store: Store,
    problems: Iterable[str],
    *,
    source: str = "collect",
    adapter: str | None = None,
    model: str | None = None,
) -> list[TaskRepairs]:
    """Per task of `problems` (in that order; tasks without sessions left out), its finished
    sessions (passed or unsolved: not one cut off mid-turn) from `source` of the model stored as
    `model` (None: any) whose adapter version is `adapter` (None: any; "base": none; `vN` or its
    served name `<base>-vN`), collected with the ceiling's recipe (`ceiling_recipe`)."""
    wanted = list(dict.fromkeys(problems))
    keep = set(wanted)
    other_recipe = {s.id for s in store.sessions(model=model, source=source) if not ceiling_recipe(s.meta)}
    by_session: dict[str, dict[int, tuple[float, bool]]] = defaultdict(dict)
    problem_of: dict[str, str] = {}
    for row in store.turn_rates(source=source, model=model):  # sessions in stored order
        if row["problem_id"] not in keep or row["status"] not in FINISHED or row["session_id"] in other_recipe:
            continue
        if adapter is not None and not _same_adapter(row["adapter_version"], adapter):
            continue
        problem_of[row["session_id"]] = row["problem_id"]
        if row["turn_index"] is not None:
            by_session[row["session_id"]][int(row["turn_index"])] = (float(row["public_pass_rate"]), _solved(row))
    tasks = {p: TaskRepairs(p) for p in wanted}
    for sid, problem in problem_of.items():
        turns, t = by_session.get(sid, {}), tasks[problem]
        t.sessions += 1
        if not turns.get(0, (0.0, False))[1]:
            t.repairs.append(turns.get(1, (-1.0, False)))
    return [t for t in tasks.values() if t.sessions]


def ceiling_recipe(meta: dict[str, Any]) -> bool:
    """Whether a session's stored sampling (`collect.sampling_meta`) is the ceiling's: a greedy first
    turn, a sampled repair, at least two turns. A greedy repair would count one deterministic
    answer N times; a sampled first turn fails other tasks. A session stored before the sampling
    was recorded (no `collect` entry) counts, as collection counts it."""
    sampling = meta.get("collect")
    if not isinstance(sampling, dict):
        return True
    sampled = LoopSettings(temperature=list(sampling.get("temperature") or []))  # its per-turn rule
    return sampled.temperature_for(0) == 0 and sampled.temperature_for(1) > 0 and int(sampling.get("turns", 0)) >= 2


def _same_adapter(stored: str | None, wanted: str) -> bool:
    """Whether a session's stored adapter (its served name `<base>-vN`, or None) is the one asked
    for as `base`, `vN` (as `--adapter` takes it elsewhere) or the served name itself."""
    if wanted == "base":
        return stored is None
    return stored is not None and (stored == wanted or (wanted[:1] == "v" and stored.endswith(f"-{wanted}")))


def _estimates(values: np.ndarray, bootstrap: BootstrapSection) -> list[dict[str, float | None]]:
    """Mean over tasks (rows) of each column, with its bootstrap interval over tasks."""
    b = bootstrap
    found = ratio_intervals(values, np.ones_like(values), resamples=b.resamples, confidence=b.confidence, seed=b.seed)
    return [{"value": e.value, "lo": e.lo, "hi": e.hi} for e in found]


def ceiling(repairs: Sequence[TaskRepairs], ks: Sequence[int], bootstrap: BootstrapSection) -> Ceiling:
    """pass@k of the repair turn over the tasks whose first turn failed in every session (a
    task whose first turn passed in some session is not a first-turn failure of this model)."""
    failed = [t for t in repairs if t.sessions and t.first_failed == t.sessions]
    n = min((t.first_failed for t in failed), default=0)
    out = Ceiling(tasks=len(repairs), failed_tasks=len(failed), samples=n, confidence=bootstrap.confidence)
    out.fixed_by_any = sum(t.fixed > 0 for t in failed)
    out.per_task = [{"problem": t.problem, "samples": t.first_failed, "fixed": t.fixed} for t in failed]
    usable = [k for k in sorted(set(ks)) if 1 <= k <= n]
    if not failed or not usable:
        return out
    estimated = np.array([[pass_at_k(t.first_failed, t.fixed, k) for k in usable] for t in failed])
    best = np.array([[float(t.best_of(k)) for k in usable] for t in failed])
    out.pass_at_k = dict(zip(usable, _estimates(estimated, bootstrap)))
    out.best_of_k = dict(zip(usable, _estimates(best, bootstrap)))
    return out


def _cell(e: dict[str, float | None]) -> str:
    return f"{e['value']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}]"


def ceiling_table(c: Ceiling) -> str:
    """A markdown table of pass@k with its interval, and the counts it rests on."""
    lines = [
        f"{c.failed_tasks} of {c.tasks} tasks failed at turn 0; {c.samples} sampled repairs each; "
        f"{c.fixed_by_any} of them fixed by at least one",
        f"| k | pass@k of the repair turn ({c.confidence:.0%} interval) | best of the first k by the public tests |",
        "|---:|---|---|",
    ]
    for k, e in c.pass_at_k.items():
        lines.append(f"| {k} | {_cell(e)} | {_cell(c.best_of_k[k])} |")
    return "\n".join(lines)
