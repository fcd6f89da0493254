"""Seeded single mutations of a correct program (issue 12, item 1), by our own `ast` pass.

    mutations = candidates(program, first_line=prompt.count("\\n") + 1)
    ordered = seeded_order(mutations, seed, task_id)

Operators, each giving one candidate per site: a comparison operator changed (`<` <-> `<=`,
`>` <-> `>=`, `==` <-> `!=`, `in` <-> `not in`, `is` <-> `is not`); an arithmetic operator
changed within its precedence class (`+` <-> `-`, `*` -> `//`, `//` -> `*`, `/` -> `*`,
`%` -> `//`); an integer constant off by one (+1 and -1); a bound off by one (the stop of
`range(...)` or a slice bound, `e` -> `e + 1` / `e - 1`); `and` <-> `or`; a dropped statement
(not a `return`, not alone in its block, a docstring not counted); a returned name replaced by another name bound in
the same function.

Only nodes that start at or after `first_line` are mutated (for HumanEval: the canonical
solution, not the prompt's signature, docstring or helper functions). A mutant is the
original text with exactly one span replaced (comments and layout elsewhere unchanged).
The order is a seeded shuffle, interleaving the operator kinds, so a few kept mutants mix
kinds. This module never runs programs: whether a mutant is kept is `trainer.repair.items`'.
"""

from __future__ import annotations

import ast
import copy
import random
from collections import Counter
from dataclasses import dataclass
from typing import Iterator

from assistant.messages.extract import normalise
from sandbox import pyast

KINDS = ("compare", "arith", "constant", "bound", "boolop", "drop", "return")

COMPARE_SWAP: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
ARITH_SWAP: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv,
}
SIMPLE = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)
NO_DROP = (
    ast.Return,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
    ast.Pass,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


@dataclass(frozen=True)
class Mutation:
    """One mutant: its operator kind, the 1-based line it changes, what changed, the program."""

    kind: str
    line: int
    description: str
    program: str


def _text(node: ast.AST) -> str:
    return ast.unparse(node)


def _replace(source: str, node: ast.AST, text: str) -> str:
    """`source` with the span of `node` replaced by `text` (ast offsets are UTF-8 bytes)."""
    lines = source.splitlines(keepends=True)
    start, end = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
    head = lines[start].encode()[: node.col_offset].decode()
    tail = lines[end].encode()[node.end_col_offset :].decode()  # type: ignore[attr-defined]
    return "".join(lines[:start]) + head + text + tail + "".join(lines[end + 1 :])


def _drop(source: str, node: ast.stmt) -> str | None:
    """`source` without the lines of `node`, or None when it shares a line with other code."""
    lines = source.splitlines(keepends=True)
    start, end = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
    before = lines[start].encode()[: node.col_offset].decode()
    after = lines[end].encode()[node.end_col_offset :].decode()  # type: ignore[attr-defined]
    if before.strip() or (after.strip() and not after.strip().startswith("#")):
        return None
    return "".join(lines[:start] + lines[end + 1 :])


def _segment(source: str, node: ast.AST) -> str:
    return ast.get_source_segment(source, node) or _text(node)


def _shifted(source: str, node: ast.expr, delta: int) -> str:
    seg = _segment(source, node)
    arith = isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv))
    base = seg if isinstance(node, SIMPLE) or arith else f"({seg})"
    return f"{base} + 1" if delta > 0 else f"{base} - 1"


def _bounds(node: ast.AST) -> Iterator[ast.expr]:
    """The stop argument of a `range(...)` call, and slice bounds, that are not constants."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        if 1 <= len(node.args) <= 3:
            yield node.args[0] if len(node.args) == 1 else node.args[1]
    elif isinstance(node, ast.Slice):
        yield from (b for b in (node.lower, node.upper) if b is not None)


def _bound_names(func: ast.AST) -> list[str]:
    """Names a function binds: its parameters and the names its body assigns (a name bound
    only as a comprehension variable is left out: returning it is a NameError, not a bug)."""
    names: set[str] = set()
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = func.args
        names |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    stored = Counter(n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    in_comprehensions = Counter(
        n.id
        for c in ast.walk(func)
        if isinstance(c, ast.comprehension)
        for n in ast.walk(c.target)
        if isinstance(n, ast.Name)
    )
    return sorted(names | {name for name, k in stored.items() if k > in_comprehensions[name]})


def _sites(source: str, tree: ast.Module, first_line: int) -> Iterator[tuple[str, ast.AST, str, str]]:
    """(kind, node, replacement text or "" for a drop, description) for every site."""
    for node in ast.walk(tree):
        yield from _drop_sites(source, node, first_line)
        if getattr(node, "lineno", 0) < first_line:
            continue
        where = f"`{_segment(source, node)}`" if isinstance(node, ast.expr) else ""
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in COMPARE_SWAP:
                    new = copy.deepcopy(node)
                    new.ops[i] = COMPARE_SWAP[type(op)]()
                    yield "compare", node, _text(new), f"comparison changed: {where} -> `{_text(new)}`"
        elif isinstance(node, ast.BinOp) and type(node.op) in ARITH_SWAP:
            new = copy.deepcopy(node)
            new.op = ARITH_SWAP[type(node.op)]()
            yield "arith", node, _text(new), f"arithmetic changed: {where} -> `{_text(new)}`"
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            for delta in (1, -1):
                yield (
                    "constant",
                    node,
                    repr(node.value + delta),
                    f"constant off by one: {node.value} -> {node.value + delta}",
                )
        elif isinstance(node, ast.BoolOp):
            new = copy.deepcopy(node)
            new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            yield "boolop", node, _text(new), f"boolean operator changed: {where} -> `{_text(new)}`"
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            yield from _return_sites(tree, node)
        for bound in _bounds(node):
            if not isinstance(bound, ast.Constant) and bound.lineno >= first_line:
                seg = _segment(source, bound)
                for delta in (1, -1):
                    text = _shifted(source, bound, delta)
                    yield "bound", bound, text, f"bound off by one: `{seg}` -> `{text}`"


def _drop_sites(source: str, node: ast.AST, first_line: int) -> Iterator[tuple[str, ast.AST, str, str]]:
    """Statements of `node`'s blocks that may be dropped (see the module doc)."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        code = [s for s in block if isinstance(s, ast.stmt) and not _is_docstring(s)] if isinstance(block, list) else []
        if len(code) >= 2:  # never empty a block (a body left with its docstring only)
            for stmt in code:
                if not isinstance(stmt, NO_DROP) and stmt.lineno >= first_line:
                    first = _segment(source, stmt).splitlines()[0]
                    yield "drop", stmt, "", f"statement dropped: `{first}`"


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _return_sites(tree: ast.Module, ret: ast.Return) -> Iterator[tuple[str, ast.AST, str, str]]:
    assert isinstance(ret.value, ast.Name)
    funcs = [
        f
        for f in ast.walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.lineno <= ret.lineno <= f.end_lineno
    ]  # type: ignore[operator]
    if not funcs:
        return
    func = max(funcs, key=lambda f: f.lineno)  # the innermost
    for name in _bound_names(func):
        if name != ret.value.id and name != func.name:
            yield "return", ret.value, name, f"wrong name returned: `{ret.value.id}` -> `{name}`"


def candidates(program: str, first_line: int = 1) -> list[Mutation]:
    """Every distinct single mutation of `program` at or after `first_line`, in source order
    of discovery; mutants that do not parse or equal the original (normalised) are left out."""
    tree = pyast.parse(program)
    seen = {normalise(program)}
    out: list[Mutation] = []
    for kind, node, text, description in _sites(program, tree, first_line):
        mutant = _drop(program, node) if kind == "drop" else _replace(program, node, text)  # type: ignore[arg-type]
        if mutant is None or normalise(mutant) in seen:
            continue
        try:
            pyast.parse(mutant)
        except SyntaxError:
            continue
        seen.add(normalise(mutant))
        out.append(Mutation(kind, node.lineno, f"line {node.lineno}: {description}", mutant))  # type: ignore[attr-defined]
    return out


def seeded_order(mutations: list[Mutation], seed: int, key: str) -> list[Mutation]:
    """A deterministic order for (seed, key): a seeded shuffle, then the kinds interleaved
    (round robin over the kinds, in a seeded order of kinds)."""
    rng = random.Random(f"{seed}:{key}")
    shuffled = list(sorted(mutations, key=lambda m: (m.line, m.kind, m.description)))
    rng.shuffle(shuffled)
    kinds = sorted({m.kind for m in shuffled})
    rng.shuffle(kinds)
    by_kind = {k: [m for m in shuffled if m.kind == k] for k in kinds}
    out: list[Mutation] = []
    for rank in range(max((len(v) for v in by_kind.values()), default=0)):
        out.extend(by_kind[k][rank] for k in kinds if rank < len(by_kind[k]))
    return out
