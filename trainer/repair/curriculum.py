"""The synthetic repair curriculum (issue 12 item 2): mutants of the *train* split's
canonical solutions, made into stored sessions with source `synthetic` that `dataset
build` and `retrain` read like any other (`dataset.sources` lists `synthetic`).

Each session has two turns, both graded in the sandbox exactly as the loop grades: turn 0
is the mutant (it fails a public test), turn 1 the canonical solution (it passes). The
dataset builder keeps such a trajectory (d > 0, max = 1) and makes from it the prompt the
repair benchmark asks (the mutant as the earlier reply, then its feedback, prev = the
mutant's pass rate); `trainer.data.dataset` builds no prompt after the canonical turn.
Mutants come from `trainer.repair.items.build_items` with configs/repair.yaml
`curriculum:` (more per task than the benchmark's pins, the same seeded order, so they
include the train split's pinned items). Only the train split: the test split's mutants
are never trained on. Rerunning adds only the items not stored yet in that rendering.

`sources` (`cobalt dataset synthesize --from DIR`) takes the train split of another set with
references instead of HumanEval's, such as examples/natural/ (`train_pairs`): bugs in the
everyday style of the natural problems. The held-out set (examples/heldout/) is refused.

`render` (configs/repair.yaml `curriculum.render`, `trainer.repair.served_form`): `served`
(the default) writes both programs as the served model writes its replies (no docstrings, no
comments, one python block) before they are graded, so the feedback's line numbers are those of
the program shown; `canonical` stores the mutant as it is (the sessions stored before issue 25,
which have no `render` in their meta).
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from assistant.interfaces import Rule, Runner
from assistant.problems.schema import Problem, ProblemError
from assistant.settings import LoopSettings, SplitSection
from assistant.store.trajectory import PASSED, UNSOLVED, SessionRecord, new_session_id
from assistant.store.trajectory_db import Store
from trainer.data.heldout import HELDOUT_SET
from trainer.repair.from_sources import reference_pairs, split_pairs
from trainer.repair.items import MutateParams, RepairItem, build_items, humaneval_sources
from trainer.repair.repair_session import RepairSession
from trainer.repair.served_form import render_program

SOURCE = "synthetic"
MODEL = "synthetic-mutant"
AUTHOR = "synthetic"


CANONICAL = "canonical"


def render_of(record: SessionRecord) -> str:
    """How a stored synthetic session's programs are written (`canonical` when it does not say)."""
    return str((record.meta or {}).get("render", CANONICAL))


def session_of(
    item: RepairItem, fixed: str, sandbox: Runner, loop: LoopSettings, render: str = CANONICAL
) -> SessionRecord:
    """The two-turn session (mutant, then `fixed`) of one item, each program written as
    `render` says, graded in the sandbox."""
    session = RepairSession(item.problem, None, sandbox, loop, source=SOURCE)  # type: ignore[arg-type]
    start = time.time()
    session.scripted(render_program(item.buggy_program, render), author=AUTHOR)
    session.scripted(render_program(fixed, render), author=AUTHOR)
    return SessionRecord(
        id=session.id or new_session_id(),
        problem_id=item.task,
        problem_hash=item.problem.content_hash(),
        model=MODEL,
        source=SOURCE,
        status=PASSED if session.passed else UNSOLVED,
        started_at=start,
        ended_at=time.time(),
        meta={"item": item.id, "mutation": item.mutation, "render": render},
        turns=session.turns,
        turn_count=len(session.turns),
        problem=item.problem,
    )


def synthesize(
    store: Store,
    sandbox: Any,
    loop: LoopSettings,
    params: MutateParams,
    *,
    rule: Rule | None = None,
    concurrency: int = 4,
    limit: int | None = None,
    render: str = "served",
    sources: list[tuple[Problem, str]] | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> Counter:
    """Build the mutants of `sources` ((train-split problem, its reference); default HumanEval's
    train split), of their first `limit` tasks, and store a session for each one not stored yet
    in `render`; returns counts."""
    sources = (humaneval_sources("train", rule) if sources is None else sources)[:limit]
    progress(f"checking mutants of {len(sources)} train-split tasks in the sandbox")
    items, log = build_items(sources, sandbox, params)
    fixed = {p.id: program for p, program in sources}
    stored = {s.meta.get("item") for s in store.sessions(source=SOURCE) if render_of(s) == render}
    todo = [i for i in items if i.id not in stored]
    counts = Counter(
        items=len(items),
        already_stored=len(items) - len(todo),
        tasks_without_mutant=len(log["no_mutant"]),
        canonical_failed=len(log["canonical_failed"]),
    )
    progress(f"{len(items)} mutants, {len(todo)} new: grading their sessions")
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for record in pool.map(lambda i: session_of(i, fixed[i.task], sandbox, loop, render), todo):
            if record.status == PASSED and not record.turns[0].passed_public:
                store.insert_session(record)
                counts["stored"] += 1
            else:
                counts["not_a_repair"] += 1
    return counts


def train_pairs(directory: Path, rule: Rule | None = None) -> list[tuple[Problem, str]]:
    """(problem, reference) of the train split of a set with references (the natural layout);
    ProblemError for the held-out set, which is never trained on."""
    pairs = reference_pairs(directory)
    if pairs[0][0].id.startswith(HELDOUT_SET + "/"):
        raise ProblemError(f"{directory}: the held-out set is for evaluation only; its tasks are never trained on")
    return split_pairs(pairs, "train", rule or SplitSection())
