"""What one repair session says, turn by turn, and the repair metrics of many.

A `RepairOutcome` is one (item, arm) session reduced to flags for turns 0..T, turn 0 being
the buggy program (never the model's) and turns 1..T the model's revisions:

- `fixed[t]`: turn t's program passes every hidden test. A session stops once its public
  tests pass; its last program then stays for later turns.
- `progress[t]`: turn t's program passes a larger share of the hidden tests than the buggy
  program (the program stays, as above).
- `ran[t]`: the model took turn t; `no_code[t]`: that reply held no python block;
  `unchanged[t]`: its program is turn t-1's code (`extract.code_key`: docstrings, comments and
  formatting aside).

Metrics (per turn 1..T, each sum(num) / sum(den) counted per task, so the intervals of
`trainer.eval.bootstrap` resample tasks, all items of a task together): fix rate and
progress over all items; unchanged and no-code rates over the turns taken. An item whose
buggy program passes the public tests (possible in a user's file) is `invalid`: the model
is never asked, and it counts in no metric. Nor does a session that ended on a model or sandbox
error (`errored`): an error is no evidence of a wrong repair, and a rerun redoes it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

import numpy as np

from assistant.messages.extract import same_code
from assistant.store.trajectory import MODEL_ERROR, SANDBOX_ERROR, Turn

FLAGS = ("fixed", "progress", "ran", "no_code", "unchanged")
ARMS = ("feedback", "blind")


@dataclass
class RepairOutcome:
    item: str
    task: str
    arm: str
    session_id: str
    status: str
    valid: bool
    fixed: list[bool]
    progress: list[bool]
    ran: list[bool]
    no_code: list[bool]
    unchanged: list[bool]

    @property
    def key(self) -> tuple[str, str]:
        return self.item, self.arm

    @property
    def errored(self) -> bool:
        """The session ended on a model or sandbox error: counted in no metric (rerun to finish)."""
        return self.status in (MODEL_ERROR, SANDBOX_ERROR)

    @property
    def counted(self) -> bool:
        return self.valid and not self.errored

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update({k: [int(x) for x in data[k]] for k in FLAGS})
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RepairOutcome":
        return cls(**{**data, **{k: [bool(x) for x in data[k]] for k in FLAGS}})

    def verdict(self) -> str:
        """A word for the report's per-item list: `fixed@t`, `progress`, `unchanged`, ..."""
        if self.errored:
            return f"error ({self.status}): not counted"
        if not self.valid:
            return "invalid (the buggy program passes the public tests)"
        first = next((t for t, f in enumerate(self.fixed) if f), None)
        if first is not None:
            return f"fixed@{first}"
        last = max((t for t, r in enumerate(self.ran) if r), default=0)
        if last == 0:
            return f"no turn ({self.status})"
        for word, flags in (("no code", self.no_code), ("unchanged", self.unchanged), ("progress", self.progress)):
            if flags[last]:
                return word
        return "wrong"


def reduce(
    turns: Sequence[Turn], horizon: int, *, item: str, task: str, arm: str, session_id: str, status: str
) -> RepairOutcome:
    """Reduce a repair session (turn 0 = the buggy program) to flags for turns 0..horizon."""
    turns = list(turns)[: horizon + 1]
    n = horizon + 1
    o = RepairOutcome(
        item, task, arm, session_id, status, bool(turns) and not turns[0].passed_public, *([False] * n for _ in FLAGS)
    )
    base = turns[0].hidden_pass_rate if turns else 0.0
    for t in range(n):
        if t >= len(turns):
            o.fixed[t], o.progress[t] = (o.fixed[t - 1], o.progress[t - 1]) if t else (False, False)
            continue
        turn = turns[t]
        o.fixed[t] = turn.passed_hidden
        o.progress[t] = turn.program is not None and turn.hidden_pass_rate > base
        if t:
            o.ran[t] = True
            o.no_code[t] = turn.program is None
            o.unchanged[t] = same_code(turn.program, turns[t - 1].program)
    return o


Counter = Callable[[RepairOutcome, int], tuple[int, int]]
METRICS: dict[str, Counter] = {
    "fix_rate": lambda o, t: (int(o.fixed[t]), 1),
    "progress": lambda o, t: (int(o.progress[t]), 1),
    "unchanged_rate": lambda o, t: (int(o.unchanged[t]), int(o.ran[t])),
    "no_code_rate": lambda o, t: (int(o.no_code[t]), int(o.ran[t])),
}
LABELS = {"fix_rate": "fix rate", "progress": "progress", "unchanged_rate": "unchanged", "no_code_rate": "no code"}


def counts(
    outcomes: Sequence[RepairOutcome], metric: str, horizon: int, tasks: Sequence[str] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(num, den) of shape (tasks, horizon + 1) over counted outcomes (valid, no error); column 0
    (the buggy program) counts nothing. `tasks` fixes the row order (default: first seen)."""
    valid = [o for o in outcomes if o.counted]
    rows = list(tasks) if tasks is not None else list(dict.fromkeys(o.task for o in valid))
    where = {task: r for r, task in enumerate(rows)}
    num, den = np.zeros((len(rows), horizon + 1)), np.zeros((len(rows), horizon + 1))
    for o in valid:
        if o.task not in where:
            continue
        for t in range(1, horizon + 1):
            n, d = METRICS[metric](o, t)
            num[where[o.task], t] += n
            den[where[o.task], t] += d
    return num, den
