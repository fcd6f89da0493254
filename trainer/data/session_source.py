"""Where training sessions come from: the trajectory store (by source and time window) or
a JSONL export (ours or the reference implementation's), each with its turns and problem.

A `pytest` problem whose project directory is not on this machine cannot be run, so its
sessions come back with no problem (the dataset's filters drop them). This module reads;
choosing prompts (`trainer.data.dataset`) and writing files (`trainer.data.dataset_files`) are not here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from assistant.loop.jsonl_export import read_jsonl
from assistant.problems.schema import Problem
from assistant.store.trajectory import RUNNING, SessionRecord
from assistant.store.trajectory_db import Store


def _usable(problem: Problem | None) -> Problem | None:
    if problem is not None and problem.kind == "pytest" and not Path(str(problem.project_dir)).is_dir():
        return None  # a local project that is not on this machine cannot be run
    return problem


def sessions_from_store(
    store: Store, *, sources: Iterable[str] | None = None, since: float | None = None, until: float | None = None
) -> list[SessionRecord]:
    """Sessions (with turns and problem) from `sources`; with a window (`since`, `until`), the finished
    ones that ended in (since, until] (one still running belongs to the window it ends in: taken
    while running, its later turns were never seen by the next window, which starts after it began)."""
    wanted = set(sources) if sources is not None else None
    out = []
    cache: dict[str, Problem | None] = {}
    windowed = since is not None or until is not None
    for s in store.sessions():
        if wanted is not None and s.source not in wanted:
            continue
        ended = s.ended_at if s.ended_at is not None else (None if s.status == RUNNING else s.started_at)
        if windowed and ended is None:
            continue
        if since is not None and ended is not None and ended <= since:
            continue
        if until is not None and ended is not None and ended > until:
            continue
        s.turns = store.turns(s.id)
        if s.problem_hash not in cache:
            cache[s.problem_hash] = _usable(store.problem_by_hash(s.problem_hash))
        s.problem = cache[s.problem_hash]
        out.append(s)
    return out


def sessions_from_jsonl(path: Path) -> list[SessionRecord]:
    """Sessions of a JSONL export (ours or the reference implementation's)."""
    with open(path, encoding="utf-8") as fh:
        sessions = read_jsonl(fh, str(path))
    for s in sessions:
        s.problem = _usable(s.problem)
    return sessions
