"""Small edits of the code the failing tests point at, for `cobalt debug`'s search
(assistant/debug/edit_search.py): the one-token and one-expression changes of mutation-based
program repair (PraPR, Ghanbari et al. 2019; the operators of mutation testing, Offutt et al.
1996): a comparison operator replaced, `and`/`or` swapped, a `not` removed or added, a number
moved by one, an index or slice bound moved by one, the operands of `-` or the arguments of a
call swapped, a name replaced by a commonly confused one (`debug.search.siblings`), a local
variable replaced by another local of the same function (the wrong variable).

Each edit changes one line and the whole file still parses. The lines come in the order given
(the failing frames first); on each line the operators come in the order of `ORDER`.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Collection, Iterable, Iterator

from assistant.debug.insert_edits import BROAD, INSERT, TARGETED, file_facts, insertions
from assistant.debug.line_text import segment, splice, wrapped
from sandbox import pyast
from sandbox.pyast import source_lines

NEAR = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}  # tried first
COMPARE = ("<", "<=", ">", ">=", "==", "!=")
ARITHMETIC = {"+": "-", "-": "+", "+=": "-=", "-=": "+=", "//": "/", "/": "//"}
NUMBER = re.compile(r"\d+(\.0*)?")
ORDER = (
    "compare",
    "boolean",
    "not",
    "negate",
    "constant",
    "arithmetic",
    "bound",
    "swap",
    "sibling",
    *TARGETED,
    "variable",
    "compare-far",
    *BROAD,
)
LATE = ("variable", "compare-far")  # many edits per line, rarely the fix: searched after every line's others


@dataclass(frozen=True)
class SmallEdit:
    """One change: the 1-based line, its text before and after, and the whole edited file."""

    line: int
    before: str
    after: str
    source: str
    operator: str
    also: tuple["SmallEdit", ...] = ()  # a pair: the other line's edit (`paired`)

    def describe(self) -> str:
        lines = [self, *self.also]
        return " and ".join(f"line {e.line}: `{e.before.strip()}` -> `{e.after.strip()}`" for e in lines)


def paired(source: str, first: SmallEdit, second: SmallEdit) -> SmallEdit | None:
    """Both edits at once (on two different lines of `source`), or None when they share a line."""
    if first.line == second.line or first.also or second.also:
        return None
    text = source_lines(source, keepends=True)
    text[first.line - 1], text[second.line - 1] = first.after, second.after
    return SmallEdit(first.line, first.before, first.after, "".join(text), "pair", (second,))


def _tokens(source: str) -> dict[int, list[tokenize.TokenInfo]]:
    by_line: dict[int, list[tokenize.TokenInfo]] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.start[0] == tok.end[0]:
            by_line.setdefault(tok.start[0], []).append(tok)
    return by_line


def _token_edits(line: str, tokens: list[tokenize.TokenInfo], siblings: dict[str, str]) -> Iterator[tuple[str, str]]:
    """(operator, new line) for every one-token change of `line`."""
    names = [t.string for t in tokens if t.type == tokenize.NAME]
    for i, tok in enumerate(tokens):
        a, b, s = tok.start[1], tok.end[1], tok.string
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.type == tokenize.OP and s in NEAR:
            yield "compare", splice(line, a, b, NEAR[s])
            for other in COMPARE:
                if other not in (s, NEAR[s]):
                    yield "compare-far", splice(line, a, b, other)
        elif tok.type == tokenize.OP and s in ARITHMETIC:
            yield "arithmetic", splice(line, a, b, ARITHMETIC[s])
        elif s in ("and", "or"):
            yield "boolean", splice(line, a, b, "or" if s == "and" else "and")
        elif s == "not":
            end = after.start[1] if after is not None and after.start[0] == tok.start[0] else b
            yield "not", splice(line, a, end, "")
        elif s == "is" and (after is None or after.string != "not"):
            yield "not", splice(line, a, b, "is not")
        elif s == "in" and "for" not in names and (i == 0 or tokens[i - 1].string != "not"):
            yield "not", splice(line, a, b, "not in")
        elif s in ("True", "False"):
            yield "constant", splice(line, a, b, "False" if s == "True" else "True")
        elif tok.type == tokenize.NAME and s in siblings:
            yield "sibling", splice(line, a, b, siblings[s])


def _number_edits(line: str, lineno: int, nodes: list[ast.AST]) -> Iterator[tuple[str, str]]:
    """Each whole number (or `256.0`) one up and one down; where the same number occurs more than
    once on the line, every occurrence moved together as well (`x * 16, y * 16` -> `x * 17, y * 17`),
    and every occurrence in the same role (`int(a, 16) * 16, int(b, 16) * 16`: the factors, not the
    bases). From the AST, so numbers inside f-strings count too."""
    found: dict[str, list[tuple[int, int]]] = {}
    roles: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for parent in nodes:
        for field, child in ast.iter_fields(parent):
            for node in child if isinstance(child, list) else [child]:
                if isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.lineno == lineno:
                    at = segment(line, node)
                    if at and NUMBER.fullmatch(line[at[0] : at[1]]):
                        role = f"{type(parent).__name__}.{type(getattr(parent, 'op', None)).__name__}.{field}"
                        found.setdefault(line[at[0] : at[1]], []).append(at)
                        roles.setdefault((line[at[0] : at[1]], role), []).append(at)
    groups = [places for places in [*found.values(), *roles.values()] if len(places) > 1]
    for text, places in found.items():
        for new in _moved(text):
            for at in places:
                yield "constant", splice(line, *at, new)
            for group in (g for g in groups if line[g[0][0] : g[0][1]] == text):
                moved = line
                for at in sorted(group, reverse=True):
                    moved = splice(moved, *at, new)
                yield "constant", moved


def _moved(text: str) -> list[str]:
    """A whole number (or `256.0`) one up and one down, never below 0."""
    whole, _, fraction = text.partition(".")
    steps = [int(whole) + step for step in (1, -1) if int(whole) + step >= 0]
    return [f"{n}.{fraction}" if "." in text else str(n) for n in steps]


def _negatable(node: ast.AST) -> Iterator[ast.AST]:
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        yield node.test
    elif isinstance(node, ast.Lambda):
        yield node.body
    elif isinstance(node, ast.Return) and isinstance(node.value, (ast.Compare, ast.BoolOp, ast.Call)):
        yield node.value


def _swaps(node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod)):
        yield node.left, node.right
    elif isinstance(node, ast.Call):
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        yield from zip(args, args[1:])
    elif isinstance(node, (ast.Tuple, ast.List)):
        yield from zip(node.elts, node.elts[1:])


def _bounds(node: ast.AST) -> Iterator[ast.AST]:
    if isinstance(node, ast.Subscript):
        parts = [node.slice.lower, node.slice.upper] if isinstance(node.slice, ast.Slice) else [node.slice]
        yield from (p for p in parts if isinstance(p, (ast.Name, ast.BinOp, ast.Attribute, ast.Call)))


def _node_edits(line: str, lineno: int, nodes: list[ast.AST]) -> Iterator[tuple[str, str]]:
    """(operator, new line) for every one-expression change whose expression lies on line `lineno`."""
    for node in nodes:
        for test in _negatable(node):
            at = segment(line, test) if getattr(test, "lineno", 0) == lineno else None
            if at:
                text = line[at[0] : at[1]]
                if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                    continue  # removing the `not` is the token edit
                yield "negate", splice(line, *at, "not " + wrapped(text, test))
        if isinstance(node, ast.BoolOp) and len(node.values) > 2 and node.lineno == lineno:
            at = segment(line, node)
            if at:
                old, new = (" and ", " or ") if isinstance(node.op, ast.And) else (" or ", " and ")
                yield "boolean", splice(line, *at, line[at[0] : at[1]].replace(old, new))
        for bound in _bounds(node):
            at = segment(line, bound) if getattr(bound, "lineno", 0) == lineno else None
            if at:
                text = wrapped(line[at[0] : at[1]], bound) if isinstance(bound, ast.BinOp) else line[at[0] : at[1]]
                yield "bound", splice(line, *at, f"{text} + 1")
                yield "bound", splice(line, *at, f"{text} - 1")
        for left, right in _swaps(node):
            a, b = segment(line, left), segment(line, right)
            if a and b and getattr(left, "lineno", 0) == lineno and a[1] <= b[0]:
                first, second = line[a[0] : a[1]], line[b[0] : b[1]]
                yield "swap", line[: a[0]] + second + line[a[1] : b[0]] + first + line[b[1] :]


def _locals(tree: ast.AST) -> dict[int, list[str]]:
    """line -> the parameters and assigned names of the innermost function holding that line."""
    found: dict[int, list[str]] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = fn.args
        names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs if a.arg not in ("self", "cls")]
        names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
        stored = (n for stmt in fn.body for n in ast.walk(stmt) if isinstance(n, ast.Name))
        names += [n.id for n in stored if isinstance(n.ctx, ast.Store)]
        unique = list(dict.fromkeys(names))
        for line in range(fn.lineno, (fn.end_lineno or fn.lineno) + 1):
            found[line] = unique  # ast.walk goes outside in, so the innermost function wins
    return found


def _variable_edits(line: str, lineno: int, nodes: list[ast.AST], local: list[str]) -> Iterator[tuple[str, str]]:
    """Each local variable read on `lineno` replaced by each other local of its function."""
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in local:
            at = segment(line, node)
            if at:
                for other in local:
                    if other != node.id:
                        yield "variable", splice(line, *at, other)


def _parses(source: str) -> bool:
    try:
        pyast.parse(source)
    except SyntaxError:
        return False
    return True


def small_edits(
    source: str,
    lines: Iterable[int],
    siblings: dict[str, str] | None = None,
    operators: Collection[str] | None = None,
) -> Iterator[SmallEdit]:
    """Every small edit of `lines` (1-based, in that order, repeats skipped) that parses, each
    file once; on a line, by `ORDER`; only those of `operators` when given. Nothing when `source`
    does not parse."""
    try:
        tree = pyast.parse(source)
        tokens = _tokens(source)
    except (SyntaxError, tokenize.TokenError):
        return
    text = source_lines(source, keepends=True)
    on_line: dict[int, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if hasattr(node, "lineno"):
            on_line.setdefault(node.lineno, []).append(node)  # type: ignore[attr-defined]
    local = _locals(tree)
    facts = file_facts(source, tree)
    seen: set[str] = {source}
    for lineno in dict.fromkeys(lines):
        if not 1 <= lineno <= len(text):
            continue
        line = text[lineno - 1]
        found = list(_token_edits(line, tokens.get(lineno, []), siblings or {}))
        found += _number_edits(line, lineno, on_line.get(lineno, []))
        found += _node_edits(line, lineno, on_line.get(lineno, []))
        found += _variable_edits(line, lineno, on_line.get(lineno, []), local.get(lineno, []))
        if operators is None or any(op in INSERT for op in operators):
            found += insertions(line, lineno, on_line.get(lineno, []), facts)
        found = sorted((f for f in found if operators is None or f[0] in operators), key=lambda f: ORDER.index(f[0]))
        for operator, new in found:
            edited = "".join(text[: lineno - 1]) + new + "".join(text[lineno:])
            if edited in seen or not _parses(edited):
                continue
            seen.add(edited)
            yield SmallEdit(lineno, line, new, edited, operator)
