"""A file as the model sees it when debugging: the implicated functions and methods in full, the
rest as an outline (imports, short module constants, class lines, `def` signatures with their
bodies left out as `...`). Three levels of detail, so a prompt can shrink until it fits:

- `OUTLINE`: imports, constants, every signature;
- `SIGNATURES`: every signature, no imports or constants;
- `KEPT_ONLY`: the kept code and the class lines around it.
"""

from __future__ import annotations

import ast

from assistant.debug.localize import Span
from sandbox import pyast
from sandbox.pyast import source_lines

OUTLINE, SIGNATURES, KEPT_ONLY = 2, 1, 0
SHORT_STATEMENT = 3  # lines: a longer constant is shown as `NAME = ...`


def _lines(lines: list[str], start: int, end: int) -> list[str]:
    return lines[start - 1 : end]


def _header(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, lines: list[str]) -> list[str]:
    """The decorator and `def`/`class` lines up to the body."""
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    end = max(node.lineno, node.body[0].lineno - 1)  # a docstring is left out with the body
    return _lines(lines, start, end)


def _stub(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], indent: str) -> list[str]:
    return _header(node, lines) + [f"{indent}    ...\n"]


def _statement(node: ast.stmt, lines: list[str], indent: str) -> list[str]:
    end = node.end_lineno or node.lineno
    if end - node.lineno + 1 <= SHORT_STATEMENT:
        return _lines(lines, node.lineno, end)
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        return [f"{indent}{ast.unparse(target)} = ...\n"]
    return [lines[node.lineno - 1].rstrip("\n") + "  ...\n"]


def _kept(node: ast.AST, keep: list[Span]) -> Span | None:
    line = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])  # type: ignore[attr-defined]
    return next((s for s in keep if s.start == line), None)


def _class(node: ast.ClassDef, lines: list[str], keep: list[Span], detail: int) -> list[str]:
    inner = [s for s in keep if node.lineno <= s.start and s.end <= (node.end_lineno or node.lineno)]
    if detail == KEPT_ONLY and not inner:
        return []
    out = _header(node, lines)
    indent = " " * (node.body[0].col_offset if node.body else 4)
    for sub in node.body:
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if _kept(sub, keep):
                out += _lines(lines, _kept(sub, keep).start, sub.end_lineno or sub.lineno)  # type: ignore[union-attr]
            elif detail >= SIGNATURES:
                out += _stub(sub, lines, indent)
        elif detail == OUTLINE and not (isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Constant)):
            out += _statement(sub, lines, indent)
    if len(out) == len(_header(node, lines)):
        out.append(f"{indent}...\n")
    return out


def render(source: str, keep: list[Span], detail: int = OUTLINE) -> str:
    """`source` with the spans in `keep` in full and the rest at `detail`."""
    lines = source_lines(source, keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    out: list[str] = []
    for node in pyast.parse(source).body:
        span = _kept(node, keep) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None
        if span is not None:
            out += _lines(lines, span.start, span.end)
        elif isinstance(node, ast.ClassDef):
            out += _class(node, lines, keep, detail)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += _stub(node, lines, "") if detail >= SIGNATURES else []
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out += _lines(lines, node.lineno, node.end_lineno or node.lineno) if detail == OUTLINE else []
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the module docstring
        elif detail == OUTLINE:
            out += _statement(node, lines, "")
    return "".join(out)
