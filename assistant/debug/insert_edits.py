"""Insertion edits for `cobalt debug`'s search (small_edits.py only replaces): the bug removed
code, so the edit puts a piece back. Each comes from the file itself, the way a person reads a
bug that dropped something:

- `insert-unused`: a local that its function assigns and never reads, added as a term
  (`other.year + self.years` -> `... + carry` where `carry` was computed and then forgotten);
- `insert-format`: a format spec's width restored (`{red:x}` -> `{red:02x}`), from the file's
  other specs of that type, else zero padding to two digits;
- `insert-call`: an expression wrapped in a one-argument function the file applies to the same
  name elsewhere (`get(hex_value)` -> `get(normalize_hex(hex_value))`);
- `insert-augment`: an assignment in a loop that lost its operator (`self._index = 1` -> `self._index += 1`);
- `insert-condition`: `and n` / `or n` added to a test, `n` a name the function tests elsewhere;
- `insert-term`: `+ t` / `- t` after an operand (`val` -> `val - low`, `length - start` ->
  `length - 1 - start`), `t` being a name the line already adds or subtracts, then `1`, and every
  operand of the same text and role on the line at once as well;
- `insert-slice`: `[:-1]` or `[1:]` after a name or attribute passed on (`f(self.path)` ->
  `f(self.path[:-1])`).

Each yields (operator, new line); small_edits.small_edits keeps those that parse.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from typing import Iterator

from assistant.debug.line_text import segment, splice

TARGETED = ("insert-unused", "insert-format", "insert-augment")  # few per line: searched with the replacements
BROAD = (
    "insert-call",
    "insert-condition",
    "insert-term",
    "insert-slice",
)  # many per line: interleaved (edit_search.py)
INSERT = TARGETED + BROAD
NUMERIC = (ast.Constant, ast.Name, ast.Attribute)
VALUE = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)
ADDITIVE = (ast.Add, ast.Sub)
ASSIGN = re.compile(r"\s*=\s*")
SPEC = re.compile(r":([^{}:!]*)\}")
WIDTH = "xXdbo"


@dataclass
class Function:
    """What one function offers its lines' insertions."""

    start: int
    end: int
    assigned: dict[str, int] = field(default_factory=dict)  # local -> the line of its first assignment
    read: set[str] = field(default_factory=set)
    tested: list[str] = field(default_factory=list)  # names read inside its tests and boolean operations
    looped: set[int] = field(default_factory=set)  # the lines inside its loops' bodies

    def unused(self, line: int) -> list[str]:
        return [n for n, at in self.assigned.items() if n not in self.read and at < line and not n.startswith("_")]


@dataclass
class FileFacts:
    functions: list[Function]
    calls: dict[str, list[str]]  # a name -> the one-argument functions the file applies to it
    specs: list[str]  # the format specs of the file, in order of first use

    def function(self, line: int) -> Function | None:
        inner = [f for f in self.functions if f.start <= line <= f.end]
        return min(inner, key=lambda f: f.end - f.start) if inner else None


def file_facts(source: str, tree: ast.AST) -> FileFacts:
    functions = [_function(fn) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))]
    calls: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            arg = node.args[0]
            if isinstance(arg, ast.Name) and isinstance(node.func, (ast.Name, ast.Attribute)):
                name = ast.unparse(node.func)
                known = calls.setdefault(arg.id, [])
                if name not in known:
                    known.append(name)
    for name, found in calls.items():  # the file's own functions only: a builtin fits too many names
        calls[name] = [f for f in found if not hasattr(builtins, f)]
    specs = list(dict.fromkeys(m.group(1) for m in SPEC.finditer(source) if m.group(1)))
    return FileFacts(functions, calls, specs)


def _function(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Function:
    found = Function(fn.lineno, fn.end_lineno or fn.lineno)
    for node in (n for stmt in fn.body for n in ast.walk(stmt)):
        if isinstance(node, (ast.For, ast.While)):
            found.looped.update(range(node.body[0].lineno, (node.end_lineno or node.lineno) + 1))
        if isinstance(node, (ast.For, ast.comprehension)):
            found.read.update(
                n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)
            )  # loop names: never "unused"
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                found.assigned.setdefault(node.id, node.lineno)
            else:
                found.read.add(node.id)
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.BoolOp)):
            test = node.test if not isinstance(node, ast.BoolOp) else node
            names = (n.id for n in ast.walk(test) if isinstance(n, ast.Name))
            found.tested.extend(n for n in names if n not in found.tested)
    args = fn.args
    params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs if a.arg not in ("self", "cls")]
    found.tested.sort(key=lambda n: n not in params)  # the parameters first
    return found


def insertions(line: str, lineno: int, nodes: list[ast.AST], facts: FileFacts) -> Iterator[tuple[str, str]]:
    """(operator, new line) for every insertion on line `lineno`, by `INSERT`'s order."""
    fn = facts.function(lineno)
    anchors = list(_anchors(line, lineno, nodes))
    if fn is not None:
        for name in fn.unused(lineno):
            yield from (("insert-unused", new) for new in _terms(line, anchors, name))
    yield from (("insert-format", new) for new in _formats(line, facts.specs))
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.lineno == lineno:
            at = segment(line, node)
            for call in facts.calls.get(node.id, []) if at else []:
                if not line[: at[0]].rstrip().endswith(f"{call}("):  # type: ignore[index]
                    yield "insert-call", splice(line, *at, f"{call}({node.id})")  # type: ignore[misc]
    for node in nodes if fn is not None and lineno in fn.looped else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, NUMERIC):
            target = node.targets[0]
            at = segment(line, target) if isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)) else None
            equals = ASSIGN.match(line, at[1]) if at else None
            for op in ("+", "-") if equals else ():
                yield "insert-augment", splice(line, equals.start(), equals.end(), f" {op}= ")  # type: ignore[union-attr]
    if fn is not None:
        for test in (n.test for n in nodes if isinstance(n, (ast.If, ast.While)) and n.test.lineno == lineno):
            at = segment(line, test)
            present = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
            for name in (n for n in fn.tested if n not in present) if at else []:
                for op in ("and", "or"):
                    yield "insert-condition", splice(line, at[1], at[1], f" {op} {name}")  # type: ignore[index]
    added = [n.id for n in _additive_names(nodes, lineno)]
    for term in dict.fromkeys([*added, "1"]):
        yield from (("insert-term", new) for new in _terms(line, anchors, term))
    for node, _ in anchors:
        if isinstance(node, (ast.Name, ast.Attribute)):
            at = segment(line, node)
            yield from (("insert-slice", splice(line, at[1], at[1], cut)) for cut in ("[:-1]", "[1:]")) if at else ()


def _anchors(line: str, lineno: int, nodes: list[ast.AST]) -> Iterator[tuple[ast.AST, str]]:
    """(operand, role) for every expression a term can follow: the operands of `+`/`-`, the
    operands of a comparison, the value assigned or returned (or its tuple's items), a call's
    positional arguments."""
    for node in nodes:
        parts: list[tuple[ast.AST, str]] = []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ADDITIVE):
            parts = [(node.left, f"{type(node.op).__name__}.left"), (node.right, f"{type(node.op).__name__}.right")]
        elif isinstance(node, ast.Compare):
            parts = [(node.left, "compare"), *((c, "compare") for c in node.comparators)]
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Return)) and node.value is not None:
            items = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            parts = [(item, "value") for item in items]
        elif isinstance(node, ast.Call):
            parts = [(arg, "argument") for arg in node.args if not isinstance(arg, ast.Starred)]
        for part, role in parts:
            if isinstance(part, ast.Constant) and type(part.value) not in (int, float):
                continue  # a term is never added to a string, a bool or None
            whole = role == "value" and isinstance(part, ast.BinOp)  # a term added at the end of a sum
            if (isinstance(part, VALUE) or whole) and getattr(part, "lineno", 0) == lineno and segment(line, part):
                yield part, role


def _additive_names(nodes: list[ast.AST], lineno: int) -> Iterator[ast.Name]:
    for node in nodes:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ADDITIVE):
            for side in (node.left, node.right):
                if isinstance(side, ast.Name) and side.lineno == lineno:
                    yield side


def _terms(line: str, anchors: list[tuple[ast.AST, str]], term: str) -> Iterator[str]:
    """`+ term` and `- term` after each anchor (and `term +` before a value), then after every
    anchor of the same text and role together."""
    places = [(segment(line, node), role) for node, role in anchors]
    texts = [line[at[0] : at[1]] for at, _ in places]  # type: ignore[index]
    for (at, role), text in zip(places, texts):
        if text == term:
            continue
        for op in ("+", "-"):
            yield splice(line, at[1], at[1], f" {op} {term}")  # type: ignore[index]
        if role == "value":
            yield splice(line, at[0], at[0], f"{term} + ")  # type: ignore[index]
    groups: dict[tuple[str, str], list[int]] = {}
    for (at, role), text in zip(places, texts):
        if text != term:
            groups.setdefault((text, role), []).append(at[1])  # type: ignore[index]
    for ends in (sorted(set(g), reverse=True) for g in groups.values() if len(set(g)) > 1):
        for op in ("+", "-"):
            new = line
            for end in ends:
                new = splice(new, end, end, f" {op} {term}")
            yield new


def _formats(line: str, specs: list[str]) -> Iterator[str]:
    """Each format spec of the line replaced by a wider one of the same type, every occurrence
    of it at once first, then one at a time."""
    found = [m for m in SPEC.finditer(line) if m.group(1)]
    for spec in dict.fromkeys(m.group(1) for m in found):
        wider = [s for s in specs if s != spec and s[-1:] == spec[-1:] and spec in s]
        if spec in WIDTH:
            wider.append(f"02{spec}")
        places = [m for m in found if m.group(1) == spec]
        for new in dict.fromkeys(wider):
            text = line
            for m in reversed(places):
                text = splice(text, m.start(1), m.end(1), new)
            yield text
            if len(places) > 1:
                yield from (splice(line, m.start(1), m.end(1), new) for m in places)
