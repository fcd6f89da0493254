"""Where in a file the failing tests point: the functions and methods (AST spans) that the failing
frames run through, then those the failing tests ran more than the passing ones (the suspects of
assistant/debug/spectrum.py), then the ones the failing tests call by name, or else the dunder
methods behind the operators of the failing lines (`a + b` -> `__add__`), or else those sharing the
most words with the failing test's name; and which
project file to fix when the user names none (the deepest failing frame in a project file that is
not a test file).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from assistant.debug.failures import Failure
from sandbox import pyast

WORD = re.compile(r"[A-Za-z_]\w*")
TEST_DIRS = {"tests", "test", "testing"}
SMALL_CLASS_LINES = 60  # a class named by a failing test is shown whole only up to this size


@dataclass(frozen=True)
class Span:
    """A top-level function or class, or a method (`qualname` Class.method); lines are 1-based and
    inclusive, decorators included."""

    name: str
    qualname: str
    kind: str  # function | class | method
    start: int
    end: int
    def_line: int = 0  # the `def`/`class` line (after the decorators); 0: not known
    decorators: tuple[str, ...] = ()  # each decorator as `ast.unparse` writes it (`property`, `value.setter`)

    def contains(self, line: int) -> bool:
        return self.start <= line <= self.end

    @property
    def size(self) -> int:
        return self.end - self.start + 1


def _span(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, kind: str, owner: str = "") -> Span:
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    qualname = f"{owner}.{node.name}" if owner else node.name
    decorators = tuple(ast.unparse(d) for d in node.decorator_list)
    return Span(node.name, qualname, kind, start, node.end_lineno or node.lineno, node.lineno, decorators)


def spans(source: str) -> list[Span]:
    """Every top-level function and class of `source`, and every method of those classes."""
    out: list[Span] = []
    for node in pyast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(_span(node, "function"))
        elif isinstance(node, ast.ClassDef):
            out.append(_span(node, "class"))
            out += [
                _span(sub, "method", node.name)
                for sub in node.body
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
    return out


def spans_if_parsed(source: str) -> list[Span]:
    """`spans(source)`, or none for a file Python cannot parse: its syntax error is the bug to fix,
    and the whole file is what is shown."""
    try:
        return spans(source)
    except SyntaxError:
        return []


def innermost(all_spans: list[Span], line: int) -> Span | None:
    """The smallest span holding `line` (a method rather than its class)."""
    holding = [s for s in all_spans if s.contains(line)]
    return min(holding, key=lambda s: s.size) if holding else None


def _by_frames(all_spans: list[Span], target: str, failure: Failure) -> list[Span]:
    inside = [f for f in failure.frames if f.path == target]
    found = [innermost(all_spans, f.line) for f in reversed(inside)]  # the deepest frame first
    return [s for s in found if s is not None]


def _by_names(all_spans: list[Span], failure: Failure) -> list[Span]:
    words = WORD.findall(failure.text) + WORD.findall(failure.test.rsplit("::", 1)[-1])
    order = {w: i for i, w in reversed(list(enumerate(words)))}
    named = [s for s in all_spans if s.name in order and s.kind != "class"]  # functions and methods first
    taken = {s.name for s in named}
    named += [
        s
        for s in all_spans
        if s.name in order and s.kind == "class" and s.name not in taken and s.size <= SMALL_CLASS_LINES
    ]
    return sorted(named, key=lambda s: order[s.name])


OPERATORS = {
    "+": ("__add__", "__radd__", "__iadd__"),
    "-": ("__sub__", "__rsub__", "__isub__", "__neg__"),
    "*": ("__mul__", "__rmul__", "__imul__"),
    "/": ("__truediv__", "__rtruediv__", "__floordiv__"),
    "%": ("__mod__",),
    "==": ("__eq__", "__ne__"),
    "!=": ("__ne__", "__eq__"),
    "<": ("__lt__", "__le__"),
    ">": ("__gt__", "__ge__"),
    "[": ("__getitem__", "__setitem__"),
    "str(": ("__str__",),
    "repr(": ("__repr__",),
    "hash(": ("__hash__",),
    "len(": ("__len__",),
}
OPERATOR = re.compile(r"==|!=|str\(|repr\(|hash\(|len\(|[-+*/%<>\[]")


def _source_lines(failure: Failure) -> list[str]:
    """The code lines a short traceback quotes (not its `path:line:` or `E` lines)."""
    lines = failure.text.splitlines()
    return [ln for ln in lines if ln.startswith("    ") and not ln.lstrip().startswith(("E ", "^"))]


def _by_operators(all_spans: list[Span], failure: Failure) -> list[Span]:
    """Dunder methods behind the operators of the failing lines (`a + b` -> __add__ ...)."""
    wanted: list[str] = []
    for line in _source_lines(failure):
        for op in OPERATOR.findall(line.split("#", 1)[0]):
            wanted += [name for name in OPERATORS.get(op, ()) if name not in wanted]
    found = [s for name in wanted for s in all_spans if s.kind == "method" and s.name == name]
    return list(dict.fromkeys(found))


def _words(name: str) -> set[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    return {w for w in spaced.split("_") if len(w) > 2 and w != "test"}


def _by_words(all_spans: list[Span], failure: Failure) -> list[Span]:
    """Functions and methods sharing the most words with the failing test's name."""
    test_words = _words(failure.test.rsplit("::", 1)[-1].split("[", 1)[0])
    scored = [(len(test_words & (_words(s.name) | _words(s.qualname))), s) for s in all_spans if s.kind != "class"]
    best = max((n for n, _ in scored), default=0)
    return [s for n, s in scored if n == best] if best else []


def implicated(
    source: str,
    target: str,
    failures: list[Failure],
    limit: int = 3,
    suspects: list[Span] | None = None,
    tried: frozenset[str] = frozenset(),
    leading: list[Span] | None = None,
) -> list[Span]:
    """Up to `limit` spans of `source` (the file at project path `target`) that the failing tests
    implicate: the `leading` spans when given (the line spectrum's functions,
    `spectrum.ranked_by_lines`), then the functions the failing frames run through (the first
    failing test's first), then the `suspects` ranked by the tests' calls
    (assistant/debug/spectrum.py), then, for a failing test whose frames stay outside the file,
    what it names or implies. Spans whose qualname is in `tried` (edited without effect) come
    last; [] when none can be told."""
    all_spans = spans_if_parsed(source)
    by_name: dict[str, list[Span]] = {}
    for span in all_spans:  # a property's getter and setter (or @overload variants) share a qualname
        by_name.setdefault(span.qualname, []).append(span)
    chosen: list[Span] = []

    def current(span: Span) -> Span | None:
        """`span` in this version of the file (the suspects may come from an earlier one)."""
        same = by_name.get(span.qualname, [])
        if span in same or not same:
            return span if same else None
        return next((s for s in same if s.decorators == span.decorators), same[0])

    def add(found: list[Span]) -> None:
        for span in found:
            now = current(span)
            if now is not None and now not in chosen:
                chosen.append(now)

    add(leading or [])
    framed = [_by_frames(all_spans, target, failure) for failure in failures]
    for found in framed:
        add(found)
    add(suspects or [])
    for failure, found in zip(failures, framed):
        if not found:  # an assert on a wrong value: what the test names or implies
            add(_by_names(all_spans, failure) or _by_operators(all_spans, failure) or _by_words(all_spans, failure))
    chosen = [s for s in chosen if s.qualname not in tried] + [s for s in chosen if s.qualname in tried]
    return chosen[:limit]


def is_test_file(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else path
    return (
        name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or bool(TEST_DIRS & set(parts))
    )


def pick_target(failures: list[Failure]) -> str | None:
    """The project file to fix: the deepest failing frame in a relative, non-test path."""
    for failure in failures:
        for frame in reversed(failure.frames):
            if not frame.path.startswith("/") and not is_test_file(frame.path) and "site-packages" not in frame.path:
                return frame.path
    return None
