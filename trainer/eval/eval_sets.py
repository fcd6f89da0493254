"""The problem sets evaluated on: deterministic splits and the perturbed view of a problem set.

Splits (`all`, `train`, `val`, `test`) are `assistant.problems.splits`' seeded shuffle of the task
ids (re-exported here); with the defaults (configs/eval.yaml), HumanEval's 164 ids give
test 82, train 66, val 16.

The perturbed view swaps the expected outputs of two public tests per problem
(`trainer.data.perturb`, docs/method.md), seeded per problem id so reruns perturb identically;
problems without two distinct public outputs are skipped and reported.
This module selects and rewrites problems; it runs nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from assistant.problems.resolve import load_problems
from assistant.problems.schema import Problem, ProblemError
from assistant.problems.splits import SPLITS, select, shuffled, split_ids
from assistant.settings import EvalSection
from trainer.data.perturb import Swap, perturb_with_swap

__all__ = ["SPLITS", "PerturbedProblem", "load_benchmark", "perturbed_view", "select", "shuffled", "split_ids"]


def load_benchmark(
    spec: str, split: str = "all", settings: EvalSection | None = None, limit: int | None = None
) -> list[Problem]:
    """`humaneval` or a problem file/directory (anything `load_problems` takes), one split
    (of `settings.split`, the `eval:` section's split rule)."""
    problems = load_problems(spec)
    chosen = select(problems, split, (settings or EvalSection()).split, limit)
    if not chosen:
        raise ProblemError(f"{spec}: the {split!r} split holds no problems")
    return chosen


@dataclass
class PerturbedProblem:
    """A problem whose public tests `swap.i` and `swap.j` carry each other's expected output."""

    original: Problem
    problem: Problem
    swap: Swap


def perturb_rng(problem_id: str, seed: int) -> random.Random:
    return random.Random(f"cobalt-eval:{seed}:{problem_id}")


def perturbed_view(problems: list[Problem], seed: int) -> tuple[list[PerturbedProblem], list[str]]:
    """(perturbed problems, ids of the problems that cannot be perturbed)."""
    kept, skipped = [], []
    for problem in problems:
        found = perturb_with_swap(problem, perturb_rng(problem.id, seed))
        if found is None:
            skipped.append(problem.id)
        else:
            kept.append(PerturbedProblem(problem, found[0], found[1]))
    return kept, skipped
