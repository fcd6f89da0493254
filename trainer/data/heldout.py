"""Which sessions may become training data (docs/method.md "Splits and leakage"): the one
filter every way into a dataset goes through (`dataset build` from the store or from a
JSONL file, and the nightly `retrain`).

- Source: only sessions whose source is in `dataset.sources`; `eval` sessions never, even
  when a configuration lists them.
- Split: with `split="train"` (the default everywhere) sessions on HumanEval's and the natural
  set's tasks of the `test` split (evaluation only) and of the `val` split (what the promotion
  gate measures) are left out, whatever their source (a `solve` on a test task included).
  `split="all"` is the explicit opt-out. Every task of the held-out set (examples/heldout/,
  source `heldout`: written to check adapters on problems nobody tuned on) is left out too.
  Problems of other sets belong to no held-out split.

Every session left out is counted by reason and every kept one by source, for
`dataset build` to print. This module selects; it reads no store and builds nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from assistant.interfaces import Rule
from assistant.problems.schema import Problem, ProblemError
from assistant.problems.splits import WHOLE_SETS, heldout_ids
from assistant.settings import SplitSection
from assistant.store.trajectory import SessionRecord

NEVER = ("eval",)
HELDOUT_SET = "heldout"  # examples/heldout/: evaluation only, every split
GUARDS = ("train", "all")


def is_heldout(session: SessionRecord, rule: Rule) -> bool:
    """On a held-out HumanEval or natural task, or any task of the held-out set (a session whose
    problem is not loaded: by its id alone)."""
    problem: Problem | None = session.problem
    if session.problem_id.startswith(HELDOUT_SET + "/"):  # its ids are heldout/<slug> (check_natural --set)
        return True
    if problem is not None and problem.source not in WHOLE_SETS:
        return False
    return session.problem_id in heldout_ids(rule)


def training_sessions(
    sessions: Iterable[SessionRecord],
    sources: Iterable[str],
    split: str = "train",
    rule: Rule | None = None,
    counts: Counter | None = None,
    keep_heldout_set: bool | None = None,
) -> list[SessionRecord]:
    """The sessions that may be trained on (see the module doc); `counts` gets
    `source:<name>` per kept session and `left_out:<reason>` per dropped one. The held-out set's
    tasks are left out unless `keep_heldout_set` (default: only with `split="all"`): a caller
    that lifts the split guard for another reason (`dataset build --tasks DIR --split val`)
    keeps it."""
    if split not in GUARDS:
        raise ProblemError(f"the training split must be one of {', '.join(GUARDS)}, not {split!r}")
    allowed = set(sources) - set(NEVER)
    rule = rule or SplitSection()
    counts = Counter() if counts is None else counts
    keep_set = split == "all" if keep_heldout_set is None else keep_heldout_set
    kept = []
    for s in sessions:
        if s.source not in allowed:
            counts[f"left_out:source_{s.source}"] += 1
        elif not keep_set and s.problem_id.startswith(HELDOUT_SET + "/"):
            counts["left_out:heldout_task"] += 1
        elif split == "train" and is_heldout(s, rule):
            counts["left_out:heldout_task"] += 1
        else:
            counts[f"source:{s.source}"] += 1
            kept.append(s)
    return kept
