"""The promotion gate (docs/method.md, issue 12 item 6): "shown not worse", not "not shown
worse".

The candidate adapter and every reference (the base model, and the current adapter when
there is one) run the repair benchmark (`trainer.repair.repair_run`, with feedback, greedy)
on the items of the validation split (`gate.benchmark`, `gate.split`: never training
tasks); the candidate is paired with each reference by item, and the paired bootstrap
interval of (candidate - reference) fix rate at the last turn comes from the evaluation's
own bootstrap (over tasks). Promote only when, against every reference, the lower end of
that interval is above -`gate.margin`, and every evaluation is complete (a dead server
must not look like a tie). Small losses cannot ratchet night after night, because the
base model is always a reference.

The size (tasks x items, greedy) and the margin are chosen so that a 10-point drop is
refused at least 90% of the time: `trainer.release.gate_sim` simulates it with the same bootstrap
(tests/trainer/release/test_gate_sim.py). Nothing here promotes; `trainer.release.nightly` acts on the decision.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from assistant.interfaces import ChatModel, Runner
from assistant.settings import BootstrapSection, EvalSection, LoopSettings
from assistant.store.trajectory_db import Store
from trainer.eval.bootstrap import DEFAULT
from trainer.repair.items import RepairItem
from trainer.repair.repair_eval import load_repair_items
from trainer.repair.repair_report import paired
from trainer.repair.repair_run import run_repair
from trainer.train_settings import GateSettings


@dataclass
class Arm:
    """One model of the comparison: a client and the adapter name it serves (None: base)."""

    label: str
    client: ChatModel
    adapter: str | None = None


def select_items(items: Sequence[RepairItem], max_tasks: int, seed: int) -> list[RepairItem]:
    """The items of a deterministic subset of `max_tasks` tasks (all when 0 or more)."""
    tasks = list(dict.fromkeys(i.task for i in items))
    if 0 < max_tasks < len(tasks):
        tasks = sorted(tasks, key=lambda t: hashlib.sha256(f"{seed}:{t}".encode()).hexdigest())[:max_tasks]
    keep = set(tasks)
    return [i for i in items if i.task in keep]


def gate_items(settings: GateSettings, es: EvalSection) -> list[RepairItem]:
    """The gate's items: `gate.benchmark` (humaneval-repair or repair:FILE.jsonl), `gate.split`."""
    items = load_repair_items(settings.benchmark, settings.split, None, es)
    return select_items(items, settings.max_problems, settings.seed)


@dataclass
class GateReport:
    turns: int
    items: int
    tasks: int
    metric: str
    margin: float
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    promote: bool = False
    reason: str = ""
    incomplete: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def compare(
    items: Sequence[RepairItem],
    references: Sequence[Arm],
    candidate: Arm,
    sandbox: Runner,
    store: Store | None,
    settings: GateSettings,
    loop: LoopSettings,
    es: EvalSection,
    progress: Callable[[str], None] = lambda _: None,
) -> GateReport:
    """Run every arm on `items`, pair the candidate with each reference, decide; `es` (the
    `eval:` section) gives the split rule and, unless `gate.bootstrap` is set, the number of
    bootstrap resamples; the confidence and the seed come from `settings`."""
    boot = BootstrapSection(
        resamples=settings.bootstrap or es.bootstrap.resamples, confidence=settings.confidence, seed=settings.seed
    )
    es = es.model_copy(update={"bootstrap": boot})
    reports = {}
    for arm in [*references, candidate]:
        progress(f"gate: {arm.client.display_name} ({arm.label}) on {len(items)} repair items")
        reports[arm.label] = run_repair(
            items,
            arm.client,
            sandbox,
            store,
            loop=loop,
            settings=es,
            turns=settings.turns,
            blind=False,
            concurrency=settings.concurrency,
            benchmark=settings.benchmark,
            split=settings.split,
            adapter=arm.adapter,
        )
    out = GateReport(
        turns=settings.turns,
        items=len(items),
        tasks=len({i.task for i in items}),
        metric="fix_rate",
        margin=settings.margin,
    )
    out.incomplete = [f"the run of {label} was aborted ({r.aborted})" for label, r in reports.items() if r.aborted]
    cand = reports[candidate.label].arm("feedback")
    for ref in references:
        d = paired(reports[ref.label].arm("feedback"), cand, "fix_rate", settings.turns, es)[settings.turns]
        out.comparisons.append({"reference": ref.label, "name": ref.client.display_name, **d.to_dict()})
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
        if c.get("lo") is None:
            return False, f"the fix rate against {c['reference']} is undefined on these items"
        good = c["lo"] > -margin
        ok = ok and good
        parts.append(
            f"vs {c['reference']} {c['name']}: {c['b']:.3f} vs {c['a']:.3f} (delta {c['delta']:+.3f}, "
            f"{confidence:.0%} interval [{c['lo']:+.3f}, {c['hi']:+.3f}]{'' if good else ', too low'})"
        )
    if not comparisons:
        return False, "there is no reference to compare with"
    head = "shown not worse" if ok else "not shown to be within the margin"
    return ok, f"{head} (lower ends above -{margin:g} required): " + "; ".join(parts)
