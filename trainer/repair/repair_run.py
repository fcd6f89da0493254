"""The repair benchmark (issue 12 item 1): for each repair item, the conversation the loop
would hold after a failed first turn (the buggy program as the model's reply, then the
feedback turn), and T more model turns; in the same run, a blind control whose feedback
turns are a plain re-ask. Greedy by default (configs/repair.yaml `benchmark:`).

    items = pinned_items("test")                      # or load_items(Path("bugs.jsonl"))
    report = run_repair(items, client, sandbox, store, loop=LoopSettings(), settings=EvalSection(), turns=1)
    print(table(report))

Sessions are recorded in the store with source `eval` (never training data), each with its
item, arm, wording and sampling in its metadata, and run C at a time in threads. A rerun
(after an interruption, or the blind control of another wording) reuses every finished
session of the same model with the same metadata and runs only the missing ones. Scoring is
`trainer.repair.repair_metrics`, reporting `trainer.repair.repair_report`.
"""

from __future__ import annotations

import copy
import hashlib
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence, Unpack

from assistant.interfaces import ChatModel, Runner
from assistant.loop import prompts
from assistant.loop.recorder import record
from assistant.serving.connect import engine_of
from assistant.settings import EvalSection, LoopSettings
from assistant.store.trajectory import MODEL_ERROR, PASSED, SANDBOX_ERROR, UNSOLVED
from assistant.store.trajectory_db import Store
from sandbox.api import SandboxError
from trainer.eval.evaluate import client_meta
from trainer.eval.run_options import RunOptions, loop_grading, loop_sampling, report_labels
from trainer.repair.items import RepairItem
from trainer.repair.repair_metrics import ARMS, RepairOutcome, reduce
from trainer.repair.repair_report import RepairReport
from trainer.repair.repair_session import RepairSession
from trainer.repair.repair_settings import BenchmarkSection, RepairSettings, repair_settings
from trainer.repair.wording import reask, wording

EVAL_SOURCE = "eval"


def loop_settings(loop: LoopSettings, turns: int, bench: BenchmarkSection) -> LoopSettings:
    """A copy of the loop settings for repair sessions: sampled as `bench` says (greedy by
    default), no repeat resampling and one candidate a turn (the benchmark measures the model as it
    is, not a best of N), turn 0 plus T turns."""
    out = copy.copy(loop)
    out.turns = turns + 1
    out.temperature = [bench.temperature]
    out.top_p = bench.top_p
    out.repeat_resamples = 0
    out.candidates = 1
    if bench.max_tokens:
        out.max_tokens = bench.max_tokens
    return out


def session_meta(
    item: RepairItem,
    arm: str,
    wording_name: str,
    loop: LoopSettings,
    engine: str | None = None,
    client: dict[str, Any] | None = None,
    reask_text: str | None = None,
) -> dict[str, Any]:
    """What makes two repair sessions interchangeable (besides the model and the problem);
    `engine` (`connect.engine_of`) only when known, `client` (`evaluate.client_meta`: the served
    client's own reply settings) and the grading settings (`loop_grading`) only where they differ
    from what earlier sessions had, so those still match; the blind arm's re-ask (`reask_text`)
    always, so a changed `reask:` is never answered by sessions of the old one."""
    return {
        "repair": {
            "item": item.id,
            "arm": arm,
            "wording": wording_name if arm == "feedback" else None,
            "answer_format": loop.answer_format,
            "buggy": hashlib.sha256(item.buggy_program.encode()).hexdigest()[:16],
            "turns": loop.turns,
            **loop_sampling(loop),
            **loop_grading(loop),
            **({"engine": engine} if engine else {}),
            **(client or {}),
            **({"reask": reask_text} if arm == "blind" and reask_text else {}),
        }
    }


def stored(store: Store, item: RepairItem, arm: str, model: str, meta: dict[str, Any]) -> RepairOutcome | None:
    """The outcome of a finished stored session with this metadata, if there is one."""
    digest = item.problem.content_hash()
    for s in store.sessions(problem_id=item.task, model=model, source=EVAL_SOURCE):
        if s.meta == meta and s.problem_hash == digest and s.status in (PASSED, UNSOLVED):
            return reduce(
                store.turns(s.id),
                meta["repair"]["turns"] - 1,
                item=item.id,
                task=item.task,
                arm=arm,
                session_id=s.id,
                status=s.status,
            )
    return None


def run_one(
    item: RepairItem,
    arm: str,
    client: ChatModel,
    sandbox: Runner,
    store: Store | None,
    loop: LoopSettings,
    feedback_turn: Callable[[str], str] | None,
    meta: dict[str, Any] | None = None,
) -> RepairOutcome:
    """One (item, arm) session: seed the buggy program, then model turns up to `loop.turns`."""
    session = RepairSession(
        item.problem, client, sandbox, loop, source=EVAL_SOURCE, stream=False, feedback_turn=feedback_turn, meta=meta
    )
    if store is not None:
        record(session, store)
    try:
        session.scripted(item.buggy_program)
    except SandboxError as exc:
        session.finish(SANDBOX_ERROR, str(exc))
    else:
        session.run()
    return reduce(
        session.turns,
        loop.turns - 1,
        item=item.id,
        task=item.task,
        arm=arm,
        session_id=session.id or "",
        status=session.status,
    )


def run_repair(
    items: Sequence[RepairItem],
    client: ChatModel,
    sandbox: Runner,
    store: Store | None,
    *,
    loop: LoopSettings,
    settings: EvalSection,
    turns: int | None = None,
    blind: bool | None = None,
    wording_name: str | None = None,
    concurrency: int | None = None,
    repair: RepairSettings | None = None,
    **options: Unpack[RunOptions[RepairOutcome]],
) -> RepairReport:
    """Run every item with feedback (and, unless `blind` is False, blind); see the module doc.
    `loop` is the configured loop (its limits and feedback settings); sampling comes from
    `repair` (configs/repair.yaml as read, default: `repair_settings()`) `benchmark:`; the
    bootstrap of the report's intervals from `settings` (the `eval:` section). The report's
    benchmark defaults to `repair`."""
    start = time.perf_counter()
    labels = report_labels(options, client.display_name, "repair")
    on_plan, on_session = options.get("on_plan"), options.get("on_session")
    repair = repair or repair_settings()
    bench = repair.benchmark
    turns = int(turns or bench.turns)
    blind = bench.blind if blind is None else blind
    base = getattr(client, "base_model", None)
    chosen = wording(wording_name or prompts.wording_for(loop, base)).feedback_wording_name
    text = reask(repair)
    loop = loop_settings(loop, turns, bench).merged({"feedback_wording": chosen})
    turn_for = {"feedback": None, "blind": lambda _feedback: text}
    arms = [a for a in ARMS if blind or a == "feedback"]
    model = client.display_name
    engine = engine_of(client)
    own = client_meta(client)
    metas = {(item.id, arm): session_meta(item, arm, chosen, loop, engine, own, text) for item in items for arm in arms}
    reused = {}
    if store is not None:
        found = (
            (key, stored(store, item, key[1], model, metas[key]))
            for item in items
            for key in [(item.id, a) for a in arms]
        )
        reused = {key: o for key, o in found if o is not None}
    jobs = [(item, arm) for item in items for arm in arms if (item.id, arm) not in reused]
    if on_plan:
        on_plan(len(jobs), len(reused))
    outcomes: list[RepairOutcome] = list(reused.values())
    aborted: str | None = None
    streak = 0
    with ThreadPoolExecutor(max_workers=int(concurrency or bench.concurrency)) as pool:
        futures = [
            pool.submit(run_one, item, arm, client, sandbox, store, loop, turn_for[arm], metas[(item.id, arm)])
            for item, arm in jobs
        ]
        for future in futures:
            if future.cancelled():
                continue
            o = future.result()
            outcomes.append(o)
            streak = streak + 1 if o.status in (MODEL_ERROR, SANDBOX_ERROR) else 0
            if streak >= 3 and aborted is None:
                aborted = f"{streak} sessions in a row ended on {o.status}"
                for f in futures:
                    f.cancel()
            if on_session:
                on_session(o)
    order = {item.id: k for k, item in enumerate(items)}
    outcomes.sort(key=lambda o: (order[o.item], ARMS.index(o.arm)))
    return RepairReport(
        **labels,
        turns=turns,
        wording=chosen,
        outcomes=outcomes,
        items=[i.id for i in items],
        wall_s=time.perf_counter() - start,
        aborted=aborted,
        settings={
            **loop_sampling(loop),
            "blind": blind,
            "reask": text if blind else None,
            "sessions_run": len(outcomes) - len(reused),
            "sessions_reused": len(reused),
        },
        eval_settings=settings,
    )
