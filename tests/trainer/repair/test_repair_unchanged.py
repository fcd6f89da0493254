"""The repair benchmark's unchanged rate counts a resubmitted buggy program as unchanged even
when the reply drops its docstring (the served model's triple quotes are banned, so every copy
of a HumanEval mutant lost its docstring and the rate read 0 on 420 of 420 revisions)."""

from __future__ import annotations

from assistant.store.trajectory import Turn
from tests.trainer.trainer_fakes import bare_turn
from trainer.repair.repair_metrics import reduce

MUTANT = 'def inc(x):\n    """Return x plus one.\n\n    >>> inc(1)\n    2\n    """\n    return x\n'


def turn(index: int, program: str, hidden: float) -> Turn:
    return bare_turn(index, program, public_pass_rate=hidden, hidden_pass_rate=hidden)


def outcome(reply_program: str, hidden: float):
    turns = [turn(0, MUTANT, 0.0), turn(1, reply_program, hidden)]
    return reduce(turns, 1, item="inc#m0", task="inc", arm="blind", session_id="s", status="unsolved")


def test_a_copy_without_its_docstring_is_unchanged() -> None:
    o = outcome("def inc(x):\n    return x  # same bug\n", 0.0)
    assert o.unchanged == [False, True] and o.verdict() == "unchanged"


def test_a_real_edit_is_not_unchanged() -> None:
    o = outcome("def inc(x):\n    return x + 1\n", 1.0)
    assert o.unchanged == [False, False] and o.fixed == [False, True]
