"""Pull the program out of a model reply: the last fenced Python block (```python, ```py,
```python3 or an untagged fence), read from the part of the reply after `</think>`.

No block means no program (`code` returns None); the loop records a "no code" turn and
the trainer scores it as a format failure. `answer_end` tells a generator where a reply's
answer is complete (the closing fence of its first explicitly tagged python block), so
serving and training stop generating there. This module never runs or repairs code.
"""

from __future__ import annotations

import ast
import re

from sandbox import pyast

THINK_END = "</think>"
THINK_START = "<think>"
PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})
# An untagged block does not end a reply: models show example input in them before the code.
STOP_TAGS = PYTHON_TAGS - {""}
# An opening fence at the start of a line, an optional tag, then everything up to a
# closing fence at the start of a line. An unclosed block is not a block.
_FENCE = re.compile(r"^([ \t]*)```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)


def after_thinking(reply: str) -> str:
    """The text after the last `</think>` (the whole reply when there is none), stripped.
    Context turns of thinking models keep only this part."""
    if THINK_END in reply:
        return reply.rsplit(THINK_END, 1)[1].strip()
    return reply


def _unindented(code: str, indent: str) -> str:
    """`code` of a fence indented by `indent` (inside a list item): each line without that prefix."""
    if not indent:
        return code
    return "".join(line[len(indent) :] if line.startswith(indent) else line for line in code.splitlines(keepends=True))


def blocks(reply: str) -> list[tuple[str, str]]:
    """Every closed fenced block as (lowercased tag, code), in order; the code of an indented
    fence loses the fence's indentation."""
    return [(m.group(2).lower(), _unindented(m.group(3), m.group(1))) for m in _FENCE.finditer(reply)]


def python_blocks(reply: str) -> list[str]:
    return [code for tag, code in blocks(after_thinking(reply)) if tag in PYTHON_TAGS]


def code(reply: str) -> str | None:
    """The last non-empty Python block of the reply's answer part, or None."""
    for candidate in reversed(python_blocks(reply)):
        if candidate.strip():
            return candidate.rstrip() + "\n"
    return None


def answer_end(text: str) -> int | None:
    """Where the answer in `text` (a reply, complete or still being generated) is complete:
    the index just past the closing fence of its first non-empty python block tagged
    ```python (or py, python3, py3), or None while no such block is closed. Inside an open
    `<think>` nothing is complete. Fences count only at the start of a line, as in `blocks`,
    so `text[:answer_end(text)]` holds the same program `code` reads from that block."""
    start = 0
    if THINK_END in text:
        start = text.rindex(THINK_END) + len(THINK_END)
    elif THINK_START in text:
        return None
    for match in _FENCE.finditer(text, start):
        if match.group(2).lower() in STOP_TAGS and match.group(3).strip():
            return match.end()
    return None


def cut_at_answer(text: str) -> str:
    """`text` up to and including the closing fence of its answer (all of it when open)."""
    end = answer_end(text)
    return text if end is None else text[:end]


def normalise(program: str | None) -> str:
    """Whitespace-normalised program text (for deduplicating generated mutants)."""
    return re.sub(r"\s+", " ", program or "").strip()


def code_key(program: str | None) -> str:
    """A key under which a resubmitted program equals its earlier version: its syntax tree
    without docstrings, comments or formatting (a model whose triple quotes are banned drops
    the docstring of the program it copies), or the whitespace-normalised text when it does
    not parse."""
    try:
        tree = pyast.parse(program or "")
    except (SyntaxError, ValueError):
        return normalise(program)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def same_code(program: str | None, earlier: str | None) -> bool:
    """Both programs exist and are the same code (`code_key`): a resubmission."""
    return program is not None and earlier is not None and code_key(program) == code_key(earlier)


def fence(program: str) -> str:
    """Wrap a program in a python fence (how human-authored turns are stored)."""
    return f"```python\n{program.rstrip()}\n```"
