"""The promotion gate (docs/method.md, issue 12 item 6, issue 25 item 4): "shown not worse", not
"not shown worse", on what users see.

The candidate adapter and every reference (the base model, and the current adapter when
there is one) are evaluated greedy on the validation split (`gate.split`: never training
tasks), and the candidate is paired with each reference on three measures:

- `repair_fix_rate`: the repair benchmark (`trainer.repair.repair_run`, with feedback) on the
  val items of every `gate.benchmarks` set (HumanEval's pinned bugs and the natural set's),
  pooled, the fix rate at turn `gate.turns`, paired by item;
- `natural_pass_turn0` and `natural_pass_last`: the natural tasks of `gate.natural.benchmarks`
  (HumanEval val and the natural set's val: `trainer.eval.evaluate`, what `cobalt eval` runs),
  Pass@1 at turn 0 and at the last of `gate.natural.turns` turns, paired by task
  (`trainer.eval.paired.compare`).

Beside them, the decision records what each arm did with the feedback (`gate_arms`: its own
turn-0 failures fixed, unchanged feedback turns), descriptive, never part of the decision.

Every interval is the evaluation's own paired bootstrap over tasks. Promote only when, on every
measure against every reference, the lower end of the interval of (candidate - reference) is
above -`gate.margin`, and every evaluation is complete (a dead server must not look like a tie).
Small losses cannot ratchet night after night, because the base model is always a reference.

The sizes (tasks x items, one greedy session each) and the margin are chosen so that a 10-point
drop on any one measure is refused at least 90% of the time: `trainer.release.gate_sim`
simulates it with the same bootstrap (tests/trainer/release/test_gate_sim.py). Nothing here
promotes; `trainer.release.nightly` acts on the decision.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence, TypeVar

from assistant.interfaces import ChatModel, Runner
from assistant.loop.progress_lines import ProgressLines
from assistant.problems.schema import Problem
from assistant.settings import BootstrapSection, EvalSection, LoopSettings
from assistant.store.trajectory import MODEL_ERROR, SANDBOX_ERROR
from assistant.store.trajectory_db import Store
from trainer.eval.bootstrap import DEFAULT, Delta
from trainer.eval.eval_report import EvalReport
from trainer.eval.eval_sets import load_benchmark
from trainer.eval.evaluate import evaluate
from trainer.eval.paired import CompareError
from trainer.eval.paired import compare as compare_reports
from trainer.release.gate_arms import arm_measures, arms_table
from trainer.release.gate_settings import GateSettings
from trainer.repair.items import RepairItem
from trainer.repair.repair_eval import load_repair_items
from trainer.repair.repair_metrics import RepairOutcome
from trainer.repair.repair_report import RepairReport, paired
from trainer.repair.repair_run import run_repair

T = TypeVar("T")

# The measures, in the order of the decision and its table: what each one is.
MEASURES = {
    "repair_fix_rate": "repair items, fix rate",
    "natural_pass_turn0": "natural tasks, turn-0 Pass@1",
    "natural_pass_last": "natural tasks, last-turn Pass@1",
}


@dataclass
class Arm:
    """One model of the comparison: a client and the adapter name it serves (None: base). With
    `serve`, the client is opened for the arm's turn only (`serve()` is a context manager that
    gives it, e.g. a server of the adapter merged that runs while the arm is evaluated)."""

    label: str
    client: ChatModel | None
    adapter: str | None = None
    serve: Callable[[], AbstractContextManager[ChatModel]] | None = None

    @property
    def name(self) -> str:
        return self.client.display_name if self.client is not None else str(self.adapter)

    def opened(self) -> AbstractContextManager[ChatModel]:
        if self.serve is not None:
            return self.serve()
        assert self.client is not None
        return nullcontext(self.client)


def _subset(things: Sequence[T], task_of: Callable[[T], str], max_tasks: int, seed: int) -> list[T]:
    """The things of a deterministic subset of `max_tasks` tasks (all when 0 or more)."""
    tasks = list(dict.fromkeys(task_of(t) for t in things))
    if 0 < max_tasks < len(tasks):
        tasks = sorted(tasks, key=lambda t: hashlib.sha256(f"{seed}:{t}".encode()).hexdigest())[:max_tasks]
    keep = set(tasks)
    return [t for t in things if task_of(t) in keep]


def select_items(items: Sequence[RepairItem], max_tasks: int, seed: int) -> list[RepairItem]:
    """The items of a deterministic subset of `max_tasks` tasks (all when 0 or more)."""
    return _subset(items, lambda i: i.task, max_tasks, seed)


def gate_item_sets(settings: GateSettings, es: EvalSection) -> dict[str, list[RepairItem]]:
    """{benchmark: its items} for every `gate.benchmarks` set, its `gate.split` items; with
    `gate.max_problems`, a deterministic subset of that many tasks over all of them."""
    sets = {b: load_repair_items(b, settings.split, None, es) for b in settings.benchmarks}
    pooled = [i for items in sets.values() for i in items]
    keep = {i.id for i in select_items(pooled, settings.max_problems, settings.seed)}
    return {b: [i for i in items if i.id in keep] for b, items in sets.items() if any(i.id in keep for i in items)}


def gate_items(settings: GateSettings, es: EvalSection) -> list[RepairItem]:
    """The gate's repair items, every set's in order."""
    return [i for items in gate_item_sets(settings, es).values() for i in items]


def gate_problems(settings: GateSettings, es: EvalSection) -> list[Problem]:
    """The gate's natural tasks: the `gate.split` tasks of every `gate.natural.benchmarks` entry,
    loaded as `cobalt eval --benchmark B --split <split>` loads them; a subset of
    `gate.natural.max_problems` of them when that is set."""
    problems = [p for spec in settings.natural.benchmarks for p in load_benchmark(spec, settings.split, es)]
    return _subset(problems, lambda p: p.id, settings.natural.max_problems, settings.seed)


@dataclass
class GateReport:
    turns: int
    items: int
    tasks: int
    metric: str
    margin: float
    natural_tasks: int = 0
    natural_turns: int = 0
    natural_benchmarks: list[str] = field(default_factory=list)
    measures: dict[str, str] = field(default_factory=lambda: dict(MEASURES))
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    promote: bool = False
    reason: str = ""
    incomplete: list[str] = field(default_factory=list)
    arm_seconds: dict[str, float] = field(default_factory=dict)  # wall time of each arm (serving included)
    arms: dict[str, dict[str, Any]] = field(default_factory=dict)  # per arm: trainer.release.gate_arms

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _row(measure: str, ref: Arm, d: Delta | None) -> dict[str, Any]:
    empty = Delta(None, None, None, None, None, 0, 0)
    return {"measure": measure, "reference": ref.label, "name": ref.name, **(d or empty).to_dict()}


def compare(
    item_sets: Mapping[str, Sequence[RepairItem]],
    problems: Sequence[Problem],
    references: Sequence[Arm],
    candidate: Arm,
    sandbox: Runner,
    store: Store,
    settings: GateSettings,
    loop: LoopSettings,
    es: EvalSection,
    progress: Callable[[str], None] = lambda _: None,
) -> GateReport:
    """Run every arm on the repair items (`item_sets`: {benchmark: items}, pooled into one
    measure) and the natural `problems`, pair the candidate with
    each reference on every measure, decide; `es` (the `eval:` section) gives the split rule
    and, unless `gate.bootstrap` is set, the number of bootstrap resamples; the confidence and
    the seed come from `settings`."""
    boot = BootstrapSection(
        resamples=settings.bootstrap or es.bootstrap.resamples, confidence=settings.confidence, seed=settings.seed
    )
    es = es.model_copy(update={"bootstrap": boot})
    greedy = es.model_copy(update={"loop": {**es.loop, "temperature": [settings.natural.temperature]}})
    nat = settings.natural
    items = [i for group in item_sets.values() for i in group]
    repairs: dict[str, list[RepairReport]] = {}
    naturals: dict[str, EvalReport] = {}
    seconds: dict[str, float] = {}
    for arm in [*references, candidate]:
        start = time.monotonic()
        with arm.opened() as client:
            progress(f"gate: {arm.name} ({arm.label}) on {len(items)} repair items")
            repairs[arm.label] = [
                run_repair(
                    group,
                    client,
                    sandbox,
                    store,
                    loop=loop,
                    settings=es,
                    turns=settings.turns,
                    blind=False,
                    concurrency=settings.concurrency,
                    benchmark=benchmark,
                    split=settings.split,
                    adapter=arm.adapter,
                    **_lines(f"gate: {arm.name} ({arm.label}) {benchmark}", progress),
                )
                for benchmark, group in item_sets.items()
            ]
            progress(f"gate: {arm.name} ({arm.label}) on {len(problems)} natural tasks, {nat.turns} turns")
            naturals[arm.label] = evaluate(
                loop,
                problems,
                client,
                sandbox,
                store,
                turns=nat.turns,
                samples=1,
                concurrency=settings.concurrency,
                settings=greedy,
                benchmark="+".join(nat.benchmarks),
                split=settings.split,
                adapter=arm.adapter,
                **_lines(f"gate: {arm.name} ({arm.label}) natural", progress),
            )
        seconds[arm.label] = round(time.monotonic() - start, 1)
        progress(f"gate: {arm.name} ({arm.label}) done in {seconds[arm.label]:.0f} s")
    out = GateReport(
        turns=settings.turns,
        items=len(items),
        tasks=len({i.task for i in items}),
        metric="fix_rate",
        margin=settings.margin,
        natural_tasks=len(problems),
        natural_turns=nat.turns,
        natural_benchmarks=list(nat.benchmarks),
        arm_seconds=seconds,
    )
    for label, runs in repairs.items():
        for r in runs:
            errors = sum(o.status in (MODEL_ERROR, SANDBOX_ERROR) for o in r.outcomes)
            if r.aborted:
                out.incomplete.append(f"the {r.benchmark} run of {label} was aborted ({r.aborted})")
            elif errors:  # an error is no evidence of a wrong repair: not counted as one
                out.incomplete.append(f"the {r.benchmark} run of {label} has {errors} session(s) ended by an error")
    for label, r in naturals.items():
        if not r.complete:
            why = r.aborted or f"{len(r.missing)} session(s) did not finish"
            out.incomplete.append(f"the natural run of {label} is incomplete ({why})")

    def feedback(label: str) -> list[RepairOutcome]:
        return [o for r in repairs[label] for o in r.arm("feedback")]

    out.arms = {
        arm.label: {
            "name": arm.name,
            **arm_measures(naturals[arm.label], feedback(arm.label), settings.turns, boot.model_dump()),
        }
        for arm in [*references, candidate]
    }
    cand = feedback(candidate.label)
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in MEASURES}
    for ref in references:
        d = paired(feedback(ref.label), cand, "fix_rate", settings.turns, es)[settings.turns]
        rows["repair_fix_rate"].append(_row("repair_fix_rate", ref, d))
        try:
            c = compare_reports(naturals[ref.label], naturals[candidate.label], es, metric="pass_at_1", turn=-1)
            turn0, last = c.deltas["pass_at_1"][0], c.deltas["pass_at_1"][-1]
        except CompareError as exc:
            out.incomplete.append(f"the natural runs of {ref.label} and the candidate cannot be paired ({exc})")
            turn0 = last = None
        rows["natural_pass_turn0"].append(_row("natural_pass_turn0", ref, turn0))
        rows["natural_pass_last"].append(_row("natural_pass_last", ref, last))
    out.comparisons = [r for m in MEASURES for r in rows[m]]
    out.promote, out.reason = decide(out.comparisons, settings.margin, settings.confidence, out.incomplete)
    return out


def decide(
    comparisons: Sequence[dict[str, Any]],
    margin: float,
    confidence: float = DEFAULT.confidence,
    incomplete: Sequence[str] = (),
) -> tuple[bool, str]:
    """(promote, why): promote when every comparison's interval lower end is above -margin."""
    if incomplete:
        return False, "unreliable: " + "; ".join(incomplete)
    parts, ok = [], True
    for c in comparisons:
        measure = c.get("measure", "repair_fix_rate")
        if c.get("lo") is None:
            return False, f"the {MEASURES.get(measure, measure)} against {c['reference']} is undefined on these tasks"
        good = c["lo"] > -margin
        ok = ok and good
        parts.append(
            f"{measure} vs {c['reference']} {c['name']}: {c['b']:.3f} vs {c['a']:.3f} (delta {c['delta']:+.3f}, "
            f"{confidence:.0%} interval [{c['lo']:+.3f}, {c['hi']:+.3f}]{'' if good else ', too low'})"
        )
    if not comparisons:
        return False, "there is no reference to compare with"
    head = "shown not worse" if ok else "not shown to be within the margin"
    return ok, f"{head} (lower ends above -{margin:g} required): " + "; ".join(parts)


def _num(x: Any, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def _lines(label: str, progress: Callable[[str], None]) -> dict[str, Any]:
    """A phase's on_plan/on_session options: its sessions counted in progress lines."""
    lines = ProgressLines(label, progress)
    return {"on_plan": lines.on_plan, "on_session": lines.on_session}


def gate_table(decision: dict[str, Any]) -> str:
    """The decision's comparisons as a markdown table, one row per measure and reference; then,
    when the decision has them, what each arm did with the feedback (`gate_arms.arms_table`)."""
    margin = decision.get("margin", 0.0)
    lines = [
        "| measure | reference | reference rate | candidate rate | delta | interval | above -margin |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in decision.get("comparisons") or []:
        measure = c.get("measure", "repair_fix_rate")
        good = c.get("lo") is not None and c["lo"] > -margin
        lines.append(
            f"| {(decision.get('measures') or MEASURES).get(measure, measure)} | {c['reference']} ({c['name']}) | "
            f"{_num(c.get('a'))} | {_num(c.get('b'))} | {_num(c.get('delta'), '+.3f')} | "
            f"[{_num(c.get('lo'), '+.3f')}, {_num(c.get('hi'), '+.3f')}] | {'yes' if good else 'NO'} |"
        )
    arms = arms_table(decision)
    return "\n".join(lines) + (f"\n\n{arms}" if arms else "")
