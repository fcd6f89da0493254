"""The pinned HumanEval repair items (`humaneval-repair`): which seeded mutants of each
task's canonical solution are items, stored in `humaneval_pins.json` next to this module.

Building the items needs the sandbox (the canonical must pass every test, the mutant must
fail a public test: `trainer.repair.items.build_items`); that is done once, by
`pin_humaneval(sandbox, params)` with configs/repair.yaml's `mutate:` (`cobalt dataset
pin-repair`), and the result is committed.
The file records, per task, the ranks of the kept mutants in the seeded candidate order
(`mutate.seeded_order`) and a short hash of each mutant program, so `pinned_items(split)`
rebuilds the same items without running anything and refuses (one sentence) when the
mutator no longer gives the pinned programs. Splits come from `assistant.problems.splits`, so the
test split's items are the test split's tasks' items.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from assistant.interfaces import Rule
from assistant.problems.schema import ProblemError
from trainer.repair.items import RepairItem, build_items, first_line, humaneval_sources, item_id
from trainer.repair.mutate import candidates, seeded_order
from trainer.repair.repair_settings import MutateParams

PIN_FILE = Path(__file__).with_name("humaneval_pins.json")


def digest(program: str) -> str:
    return hashlib.sha256(program.encode()).hexdigest()[:16]


def _ordered(problem: Any, program: str, params: MutateParams) -> list[Any]:
    return seeded_order(candidates(program, first_line(problem, program)), params.seed, problem.id)[
        : params.max_candidates
    ]


def pin_humaneval(sandbox: Any, params: MutateParams, path: Path = PIN_FILE) -> dict[str, Any]:
    """Build the items of every HumanEval task in the sandbox with `params` (configs/repair.yaml
    `mutate:`) and write the pin file."""
    sources = humaneval_sources("all")
    items, log = build_items(sources, sandbox, params)
    programs = {p.id: program for p, program in sources}
    problems = {p.id: p for p, _ in sources}
    tasks: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        order = [m.program for m in _ordered(problems[item.task], programs[item.task], params)]
        tasks.setdefault(item.task, []).append(
            {"rank": order.index(item.buggy_program), "sha": digest(item.buggy_program), "mutation": item.mutation}
        )
    data = {"params": params.model_dump(), "log": log, "tasks": tasks}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data


def pinned_items(split: str, rule: Rule | None = None, path: Path = PIN_FILE) -> list[RepairItem]:
    """The pinned items of the HumanEval tasks in `split`, rebuilt without the sandbox."""
    data = json.loads(path.read_text())
    params = MutateParams(**data["params"])
    out: list[RepairItem] = []
    for problem, program in humaneval_sources(split, rule):
        order = _ordered(problem, program, params)
        for k, pin in enumerate(data["tasks"].get(problem.id, [])):
            mutant = order[pin["rank"]] if pin["rank"] < len(order) else None
            if mutant is None or digest(mutant.program) != pin["sha"]:
                raise ProblemError(
                    f"the pinned repair item {item_id(problem.id, k)} no longer matches the "
                    f"mutator; rebuild the pins with `cobalt dataset pin-repair`"
                )
            out.append(RepairItem(item_id(problem.id, k), problem, mutant.program, mutant.description))
    return out
