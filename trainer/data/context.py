"""Perturbed contexts: the earlier turns of a partial prompt with the feedback they would
have received from a perturbed problem (two public expected outputs swapped).

Each context program is re-run against the perturbed *public* tests in the sandbox and its
feedback re-rendered by `assistant.loop.feedback.render`, exactly as the loop renders it. The
row keeps the true problem, so the reward still uses the true tests. A turn without a
program keeps its "no code block" feedback.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

from assistant.interfaces import BatchRunner
from assistant.loop import feedback
from assistant.loop.sanitize import graded_program
from assistant.problems.schema import Problem
from assistant.settings import LoopSettings
from sandbox.api import Job
from trainer.data.dataset import BuildStats, PartialPrompt
from trainer.data.perturb import perturb_problem
from trainer.training.execution import run_with_retries


@dataclass
class PerturbPlan:
    prompt: PartialPrompt
    jobs: list[tuple[int, Job]]  # (turn position, job) for turns that have a program


def choose(
    prompts: Sequence[PartialPrompt],
    fraction: float,
    rng: random.Random,
    stats: BuildStats | None = None,
    sanitize: bool = True,
) -> list[PerturbPlan]:
    """Pick round(fraction x eligible) prompts with at least one earlier turn and a
    perturbable problem; perturb each problem with `rng`. Each context program is re-run as the
    loop graded it (`sanitize`: `loop.sanitize_answers`)."""
    with_context = [p for p in prompts if p.turns]
    plans: list[PerturbPlan] = []
    eligible: list[tuple[PartialPrompt, Problem]] = []
    for p in with_context:
        perturbed = perturb_problem(p.problem, rng)
        if perturbed is None:
            if stats:
                stats.add("perturb_not_possible")
            continue
        eligible.append((p, perturbed))
    count = round(fraction * len(eligible))
    for p, perturbed in rng.sample(eligible, count) if count else []:
        jobs = [
            (
                i,
                Job(
                    program=graded_program(t.program, p.problem.kind, sanitize),
                    tests=list(perturbed.public_tests),
                    kind=p.problem.kind,
                ),
            )
            for i, t in enumerate(p.turns)
            if t.program is not None
        ]
        plans.append(PerturbPlan(p, jobs))
    return plans


def apply(
    plans: list[PerturbPlan],
    sandbox: BatchRunner,
    loop: LoopSettings,
    retries: int = 2,
    wait_s: float = 1.0,
    stats: BuildStats | None = None,
) -> int:
    """Run every context program of the plans at once, then set each prompt's perturbed
    feedback. A prompt whose runs fault persistently stays unperturbed (counted). Returns
    how many prompts were perturbed."""
    flat = [job for plan in plans for _, job in plan.jobs]
    results, _ = run_with_retries(sandbox, flat, retries, wait_s) if flat else ([], 0)
    done = 0
    cursor = 0
    for plan in plans:
        texts = [t.feedback for t in plan.prompt.turns]
        ok = True
        for position, _job in plan.jobs:
            result = results[cursor]
            cursor += 1
            if result is None:
                ok = False
                continue
            texts[position] = feedback.render(result, field_chars=loop.feedback_field_chars, timeout_s=loop.timeout_s)
        if not ok:
            if stats:
                stats.add("perturb_faults")
            continue
        plan.prompt.feedback_override = texts
        plan.prompt.perturbed = True
        done += 1
    if stats:
        stats.add("prompts_perturbed", done)
    return done
