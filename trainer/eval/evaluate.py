"""Multi-turn evaluation (docs/method.md, issue 5): run N sessions of T turns per problem
(feedback from public tests only, grading on hidden tests), reduce each to per-turn
outcomes, and report Pass@1 per turn, solved-by-turn, fix, unchanged, correct->wrong and,
on perturbed problems, hacking rates with bootstrap intervals.

Sessions run through `assistant.loop.collect` (C in flight, generation overlapping execution)
and are stored with source `eval`, so an interrupted evaluation resumes: a rerun reuses
every finished `eval` session of the same model on the same problem content, sampled the
same way (temperature, top_p, max_tokens, answer format, feedback wording: `sampling_meta`,
stored with each session), that covers T turns (it passed, or it took at least T turns),
oldest first, and runs only the missing ones. Sample k of a problem is its k-th oldest such
session; two models evaluated with the same N are paired by (problem, k). Sessions that ended
on an error are redone. Other settings (the system prompt's text) do not separate stored
sessions: evaluate such a change under another model name or in another data dir.

    problems = load_benchmark("humaneval", "val")
    report = evaluate(settings.loop, problems, client, sandbox, store, turns=3, samples=2)
    verdict = compare(base_report, report).not_worse

Library only; `trainer.cli.eval_cmd` is the command line.
"""

from __future__ import annotations

import time
from typing import Any, Sequence, Unpack

from assistant.interfaces import ChatModel, Runner
from assistant.loop.collect import collect
from assistant.loop.prompts import wording_for
from assistant.loop.session import Session
from assistant.problems.schema import Problem
from assistant.serving.connect import engine_of
from assistant.settings import DEFAULT_FEEDBACK_WORDING, EvalSection, LoopSettings
from assistant.store.trajectory import PASSED, UNSOLVED, SessionRecord
from assistant.store.trajectory_db import Store
from trainer.data.perturb import Swap
from trainer.eval.eval_metrics import outcome
from trainer.eval.eval_report import EvalReport, describe, plot, table
from trainer.eval.eval_sets import SPLITS, load_benchmark, perturbed_view, split_ids
from trainer.eval.paired import CompareError, ComparisonReport, compare, comparison_table
from trainer.eval.run_options import RunOptions, loop_grading, loop_sampling, report_labels

EVAL_SOURCE = "eval"

__all__ = [
    "evaluate",
    "compare",
    "EvalReport",
    "ComparisonReport",
    "CompareError",
    "load_benchmark",
    "split_ids",
    "SPLITS",
    "usable_sessions",
    "client_meta",
    "table",
    "comparison_table",
    "describe",
    "plot",
    "EVAL_SOURCE",
]


def sampling_meta(loop: LoopSettings, model: str | None = None) -> dict[str, Any]:
    """What makes two natural eval sessions interchangeable besides the model, the problem and
    the horizon: stored with each session, matched on reuse (a rerun at another temperature
    or with another feedback wording must not count the earlier run's sessions). `model` is the
    built-in model served (`ChatClient.base_model`), whose own wording applies when
    `loop.feedback_wording` is unset."""
    wording = wording_for(loop, model)
    return {
        "eval": {
            **loop_sampling(loop),
            "answer_format": loop.answer_format,
            "repeat_resamples": loop.repeat_resamples,
            **loop_grading(loop),
            # only when on, so that sessions stored before the setting existed still match
            **(
                {"candidates": loop.candidates, "candidate_temperature": loop.candidate_temperature}
                if loop.candidates > 1
                else {}
            ),
            # only when not the wording every session used before wordings could differ, so
            # that those sessions still match
            **({"feedback_wording": wording} if wording != DEFAULT_FEEDBACK_WORDING else {}),
        }
    }


def client_meta(client: Any) -> dict[str, Any]:
    """The served client's own settings that change its replies, stored with each eval session and
    matched on reuse: the docstring ban off (`model.suppress_docstrings`), the repetition stop off
    (`model.stop_on_repetition`), an adapter scale other than 1 (`server.llama.lora_scale`). Each
    only where it differs from what every local session had before they were recorded, so those
    still match; a provider's or a fake's client (no `base_model`) has none of them."""
    if getattr(client, "base_model", None) is None:
        return {}
    out: dict[str, Any] = {}
    if not getattr(client, "logit_bias", None):
        out["docstrings"] = "allowed"
    if getattr(client, "repeat_stop", None) is None:
        out["repeat_stop"] = "off"
    lora = (getattr(client, "extra_body", None) or {}).get("lora") or []
    scales = {float(entry.get("scale", 0.0)) for entry in lora} - {0.0}
    if scales - {1.0}:
        out["lora_scale"] = max(scales)
    return out


def usable_sessions(
    store: Store, problem: Problem, model: str, turns: int, meta: dict[str, Any]
) -> list[SessionRecord]:
    """Finished `eval` sessions of `model` on this exact problem content, sampled as `meta`
    says (`sampling_meta`), that cover `turns` turns, oldest first. A repair-benchmark session
    is also an `eval` session on the same problem, but its meta names its item: never one of these."""
    digest = problem.content_hash()
    return [
        s
        for s in store.sessions(problem_id=problem.id, model=model, source=EVAL_SOURCE)
        if s.problem_hash == digest
        and s.meta.get("eval") == meta["eval"]
        and (s.status == PASSED or (s.status == UNSOLVED and s.turn_count >= turns))
    ]


def evaluate(
    loop: LoopSettings,
    problems: Sequence[Problem],
    client: ChatModel,
    sandbox: Runner,
    store: Store,
    *,
    turns: int,
    samples: int,
    perturbed: bool = False,
    concurrency: int = 4,
    settings: EvalSection | None = None,
    **options: Unpack[RunOptions[Session]],
) -> EvalReport:
    """Evaluate `client` on `problems` (or on their perturbed view); see the module doc.
    `loop` is the `loop:` settings section; sessions run it with the evaluation's overrides
    (`settings`: the `eval:` section). The report's benchmark defaults to `custom`."""
    start = time.perf_counter()
    labels = report_labels(options, client.display_name, "custom")
    settings = settings or EvalSection()
    loop = settings.loop_settings(loop, turns)
    jobs: list[tuple[Problem, Swap | None]]
    skipped: list[str] = []
    if perturbed:
        views, skipped = perturbed_view(list(problems), settings.perturb.seed)
        jobs = [(v.problem, v.swap) for v in views]
    else:
        jobs = [(p, None) for p in problems]
    to_run = [p for p, _ in jobs]
    meta = sampling_meta(loop, getattr(client, "base_model", None))
    engine = engine_of(client)
    if engine:  # only when known, so that sessions stored before it was recorded still match
        meta = {"eval": {**meta["eval"], "engine": engine}}
    meta = {"eval": {**meta["eval"], **client_meta(client)}}
    run = collect(
        to_run,
        client,
        sandbox,
        store,
        loop,
        samples=samples,
        concurrency=concurrency,
        source=EVAL_SOURCE,
        done=lambda p, m: len(usable_sessions(store, p, m, turns, meta)),
        on_plan=options.get("on_plan"),
        on_session=options.get("on_session"),
        meta=meta,
    )
    outcomes, missing = [], []
    for problem, swap in jobs:
        sessions = usable_sessions(store, problem, client.display_name, turns, meta)[:samples]
        for k, record in enumerate(sessions):
            outcomes.append(
                outcome(
                    store.turns(record.id),
                    turns,
                    problem_id=problem.id,
                    sample=k,
                    session_id=record.id,
                    kind=problem.kind,
                    swap=swap,
                )
            )
        missing += [(problem.id, k) for k in range(len(sessions), samples)]
    return EvalReport(
        **labels,
        turns=turns,
        samples=samples,
        perturbed=perturbed,
        outcomes=outcomes,
        problems=[p.id for p in to_run],
        skipped=skipped,
        missing=missing,
        sessions_run=sum(run.statuses.values()),
        sessions_reused=run.already_stored,
        wall_s=time.perf_counter() - start,
        aborted=run.aborted,
        settings={
            **loop_sampling(loop),
            "repeat_resamples": loop.repeat_resamples,
            "concurrency": concurrency,
            "split_seed": settings.split.seed,
            "perturb_seed": settings.perturb.seed,
            "session_statuses": dict(run.statuses),
        },
        eval_settings=settings,
    )
