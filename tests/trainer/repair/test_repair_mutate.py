"""The `ast` mutator: every operator kind gives the expected single-span mutants, only at
or after `first_line`, deterministic for a seed, and every mutant parses and differs."""

from __future__ import annotations

import ast

from trainer.repair.mutate import KINDS, candidates, seeded_order

PROGRAM = '''def helper(x):
    return x < 1


def f(xs, k):
    """Doc."""
    total = 0
    best = None
    for i in range(len(xs)):
        if xs[i] > k and i != 0:
            total += xs[i] * 2
    best = total
    return best  # the answer
'''


def descriptions(first_line: int = 1) -> list[str]:
    return [m.description for m in candidates(PROGRAM, first_line)]


def test_every_kind_and_only_after_first_line() -> None:
    found = candidates(PROGRAM, first_line=5)
    assert {m.kind for m in found} == set(KINDS)
    assert all(m.line >= 5 for m in found)
    assert not any("x < 1" in d for d in descriptions(5)) and any("x < 1" in d for d in descriptions(1))
    text = descriptions(5)
    for expected in (
        "`xs[i] > k` -> `xs[i] >= k`",
        "`i != 0` -> `i == 0`",
        "constant off by one: 0 -> 1",
        "bound off by one: `len(xs)` -> `len(xs) + 1`",
        "`xs[i] * 2` -> `xs[i] // 2`",
        "`xs[i] > k and i != 0` -> `xs[i] > k or i != 0`",
        "statement dropped: `best = total`",
        "wrong name returned: `best` -> `total`",
        "wrong name returned: `best` -> `k`",
    ):
        assert any(expected in d for d in text), expected
    assert not any("statement dropped: `return" in d or "Doc." in d for d in text)


def test_mutants_are_single_changes_that_parse() -> None:
    for m in candidates(PROGRAM, first_line=5):
        ast.parse(m.program)
        assert m.program != PROGRAM
        assert m.program.splitlines()[:4] == PROGRAM.splitlines()[:4]
        assert "# the answer" in m.program or m.kind == "drop"
        changed = [a for a, b in zip(PROGRAM.splitlines(), m.program.splitlines()) if a != b]
        assert m.kind == "drop" or len(changed) == 1


def test_seeded_order_is_deterministic_and_mixes_kinds() -> None:
    found = candidates(PROGRAM, first_line=5)
    first = seeded_order(found, 0, "task")
    assert first == seeded_order(list(reversed(found)), 0, "task")
    assert sorted(m.description for m in first) == sorted(m.description for m in found)
    assert first != seeded_order(found, 1, "task")
    assert len({m.kind for m in first[: len(KINDS)]}) == len(KINDS)
