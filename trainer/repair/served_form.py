"""Synthetic repair contexts written like the served model's own replies (issue 25 item 2).

The served model never writes a docstring (its triple-quote tokens are banned at serving,
configs/default.yaml `model.suppress_docstrings`) and answers `code_first`: one python block,
nothing before it, the reply ending at its closing fence (`model.stop_at_fence`). A mutant of
a canonical solution carries the task's docstring and comments; `served_program` removes them:

- docstrings (the first statement of the module, of a class or of a function when it is a string
  literal), and any other bare string statement (a no-op the served model cannot write either), by
  their `ast` line spans; a body left empty gets `pass` at the string's indent;
- comments by `tokenize` (a comment alone on its line drops the line; a trailing one is cut
  with the blanks before it);
- leading and trailing blank lines, and runs of more than two blank lines left behind.

Everything else stays byte-identical. The result has the same syntax tree as the input once
bare strings are set aside (`doc_key`); should that ever fail, the program is
`ast.unparse`d without docstrings instead (same behaviour, new layout). `served_reply` wraps a
program as a served reply (`extract.fence`). `render_program` applies a configured rendering
(`RENDERS`: `served`, or `canonical` = the program as it is, as datasets before issue 25 had it).
This module formats text only; it never runs programs.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from assistant.messages.extract import fence
from sandbox import pyast

RENDERS = ("served", "canonical")
_DOC_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _is_doc(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _docstrings(tree: ast.Module) -> list[tuple[ast.stmt, bool]]:
    """Every bare string statement (a docstring, or a string literal later in a body: a no-op),
    with whether removing the strings of its body empties a class or function body."""
    out = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            strings = [s for s in body if isinstance(s, ast.stmt) and _is_doc(s)]
            empties = len(strings) == len(body) and not isinstance(node, ast.Module)
            out.extend((s, empties and i == 0) for i, s in enumerate(strings))
    return out


def strip_docstrings(program: str) -> str:
    """`program` without the lines of its docstrings (one that shares a line with other code stays)."""
    lines = program.splitlines(keepends=True)
    for stmt, empties in sorted(_docstrings(pyast.parse(program)), key=lambda d: -d[0].lineno):
        start, end = stmt.lineno - 1, stmt.end_lineno - 1  # type: ignore[operator]
        before = lines[start].encode()[: stmt.col_offset].decode()
        after = lines[end].encode()[stmt.end_col_offset :].decode()  # type: ignore[index]
        if before.strip() or (after.strip() and not after.strip().startswith("#")):
            continue
        lines[start : end + 1] = [f"{before}pass\n"] if empties else []
    return "".join(lines)


def strip_comments(program: str) -> str:
    """`program` without its comments: a comment-only line is dropped, a trailing comment cut."""
    lines = program.splitlines(keepends=True)
    drop: set[int] = set()
    cuts: dict[int, int] = {}
    for tok in tokenize.generate_tokens(io.StringIO(program).readline):
        if tok.type != tokenize.COMMENT:
            continue
        row, col = tok.start[0] - 1, tok.start[1]
        if not lines[row][:col].strip():
            drop.add(row)
        else:
            cuts[row] = col
    out = []
    for i, line in enumerate(lines):
        if i in drop:
            continue
        if i in cuts:
            ending = "\n" if line.endswith("\n") else ""
            line = line[: cuts[i]].rstrip() + ending
        out.append(line)
    return "".join(out)


def _tidy(program: str) -> str:
    text = re.sub(r"\n(?:[ \t]*\n){3,}", "\n\n\n", program)
    return text.strip("\n").rstrip() + "\n"


def doc_key(program: str) -> str:
    """`ast.dump` of `program` without its bare string statements (an emptied body holds `pass`):
    equal keys, the same behaviour."""
    tree = pyast.parse(program)
    _undocumented(tree)
    return ast.dump(tree)


def _undocumented(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and any(isinstance(s, ast.stmt) and _is_doc(s) for s in body):
                kept = [s for s in body if not (isinstance(s, ast.stmt) and _is_doc(s))]
                setattr(node, field, kept or ([] if isinstance(node, ast.Module) else [ast.Pass()]))
    return tree


def served_program(program: str) -> str:
    """`program` as the served model writes it: no docstrings, no comments (see the module doc)."""
    out = _tidy(strip_comments(strip_docstrings(program)))
    try:
        same = doc_key(out) == doc_key(program)
    except (SyntaxError, ValueError):
        same = False
    if same:
        return out
    return ast.unparse(_undocumented(pyast.parse(program))) + "\n"


def served_reply(program: str) -> str:
    """A served reply holding `program`: one python block and nothing else (the `code_first`
    answer format, ended at the closing fence)."""
    return fence(served_program(program))


def render_program(program: str, render: str) -> str:
    """The program a synthetic turn holds under the rendering `render` (`RENDERS`)."""
    if render not in RENDERS:
        raise ValueError(f"unknown rendering {render!r}; use one of {', '.join(RENDERS)}")
    return served_program(program) if render == "served" else program
