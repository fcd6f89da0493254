"""Function tests whose expected value never enters the program's process (docs/method.md).

`value_check(snippet)` recognises the shapes that can be judged outside: the snippet's last
statement is `assert CALL == EXPECTED` (either side literal, the other not),
`assert CALL`, `assert not CALL`, `assert CALL is None/True/False`, or
`assert abs(CALL - X) < TOL` (also `<=`, `math.fabs`), with at most a string literal as
the assert's message; every earlier statement is setup. The container then gets only the
setup and CALL (`Check.child_code`, same line numbers); the child sends CALL's result back
as plain data (sandbox/harness/plain.py) and `Check.judge` decides here, with Python's
own `==` between plain values, so no object of the program's ever takes part in a
comparison. Any other snippet returns None and runs whole in the child, as before.
Not here: canaries (sandbox/canary.py) or the wire format (sandbox/protocol.py).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

from sandbox import pyast
from sandbox.harness.plain import NotPlain, decode

REPR_CAP = 1000
_UNSET = object()


@dataclass
class Check:
    """How to judge one value test; `expected` and `bound` never leave the host."""

    shape: str  # "eq", "true", "false", "is", "close"
    setup_src: str  # the snippet's lines before the call, then blank lines up to it
    call_src: str
    line: int  # the call's line in the snippet
    shown_line: str  # that line as the test wrote it (for the user's traceback)
    expected: Any = None  # eq / is: the value; close: X
    bound: float = 0.0  # close: TOL
    strict: bool = True  # close: `<` (else `<=`)
    message: str | None = None

    @property
    def child_code(self) -> str:
        return f"{self.setup_src}({self.call_src})\n"

    def canary_code(self, token: str) -> str:
        """This test's setup and call compared, in the child, with a value no honest call returns."""
        return f"{self.setup_src}assert ({self.call_src}) == {token!r}\n"

    def judge(self, value_text: str | None) -> dict[str, Any]:
        """status, detail, actual, expected and extra stderr for the value the child sent."""
        try:
            if value_text is None:
                raise NotPlain("no value came back")
            actual = decode(value_text)
        except NotPlain as exc:
            return {"status": "failed", "detail": f"the returned value cannot be compared: {exc}"}
        shown = {"actual": _short_repr(actual)}
        if self.shape == "eq":
            shown["expected"] = _short_repr(self.expected)
        try:
            passed = self._holds(actual)
        except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
            return dict(
                shown,
                status="error",
                detail=f"runtime error: {type(exc).__name__}",
                stderr=self._traceback(f"{type(exc).__name__}: {exc}"),
            )
        if passed:
            return dict(shown, status="passed", detail="")
        error = "AssertionError" + (f": {self.message}" if self.message else "")
        return dict(shown, status="failed", detail="assertion failed", stderr=self._traceback(error))

    def _holds(self, actual: Any) -> bool:
        if self.shape == "eq":
            return bool(self.expected == actual)
        if self.shape == "true":
            return bool(actual)
        if self.shape == "false":
            return not actual
        if self.shape == "is":
            return actual is self.expected
        distance = abs(actual - self.expected)
        return bool(distance < self.bound if self.strict else distance <= self.bound)

    def _traceback(self, last: str) -> str:
        return (
            f'Traceback (most recent call last):\n  File "<test>", line {self.line}, in <module>\n'
            f"    {self.shown_line.strip()}\n{last}\n"
        )

    def restore_line(self, stderr: str) -> str:
        """Show the test's own line where a traceback quotes the child's version of it."""
        child_line = re.escape(self.child_code.splitlines()[self.line - 1].strip())
        caret = r"(?:[ \t]*[~^]+[~^ \t]*\n)?"  # positions in the child's line mean nothing here
        return re.sub(rf"\n    {child_line}\n{caret}", lambda _m: f"\n    {self.shown_line.strip()}\n", stderr)


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except (RecursionError, ValueError) as exc:
        text = f"<repr failed: {type(exc).__name__}>"
    return text if len(text) <= REPR_CAP else text[:500] + " ... " + text[-400:]


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNSET


def _close_parts(test: ast.Compare) -> tuple[ast.AST, Any, float] | None:
    """`abs(CALL - X) < TOL` (or X - CALL, math.fabs) -> (CALL, X, TOL)."""
    fn, bound = test.left, _literal(test.comparators[0])
    if not (isinstance(fn, ast.Call) and len(fn.args) == 1 and not fn.keywords):
        return None
    name = fn.func
    is_abs = (isinstance(name, ast.Name) and name.id == "abs") or (
        isinstance(name, ast.Attribute)
        and name.attr == "fabs"
        and isinstance(name.value, ast.Name)
        and name.value.id == "math"
    )
    diff = fn.args[0]
    if not is_abs or not isinstance(diff, ast.BinOp) or not isinstance(diff.op, ast.Sub):
        return None
    if not isinstance(bound, (int, float)) or isinstance(bound, bool):
        return None
    for call, other in ((diff.left, diff.right), (diff.right, diff.left)):
        target = _literal(other)
        if isinstance(target, (int, float)) and not isinstance(target, bool) and _literal(call) is _UNSET:
            return call, target, float(bound)
    return None


def _shape(test: ast.expr) -> tuple[str, ast.AST, Any, float, bool] | None:
    """(shape, CALL node, expected, bound, strict) of an assert's test, or None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return ("false", test.operand, None, 0.0, True) if _literal(test.operand) is _UNSET else None
    if isinstance(test, (ast.Call, ast.Name, ast.Subscript, ast.Attribute)):
        return ("true", test, None, 0.0, True) if _literal(test) is _UNSET else None
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(op, ast.Eq):
        for call, other in ((left, right), (right, left)):
            expected = _literal(other)
            if expected is not _UNSET and _literal(call) is _UNSET:
                return "eq", call, expected, 0.0, True
        return None
    if isinstance(op, ast.Is):
        expected = _literal(right)
        if expected in (None, True, False) and type(expected) in (type(None), bool) and _literal(left) is _UNSET:
            return "is", left, expected, 0.0, True
        return None
    if isinstance(op, (ast.Lt, ast.LtE)):
        parts = _close_parts(test)
        if parts is not None:
            return "close", parts[0], parts[1], parts[2], isinstance(op, ast.Lt)
    return None


def value_check(snippet: str) -> Check | None:
    """The Check for a snippet whose last statement has a value-test shape, else None."""
    try:
        tree = pyast.parse(snippet)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None  # the harness reports the snippet's own error
    if not tree.body or not isinstance(tree.body[-1], ast.Assert):
        return None
    last = tree.body[-1]
    if len(tree.body) > 1 and (tree.body[-2].end_lineno or 0) >= last.lineno:
        return None  # `x = 1; assert f(x) == 2`: the setup shares the assert's line
    message = None
    if last.msg is not None:
        message = _literal(last.msg)
        if not isinstance(message, str):
            return None
    shape = _shape(last.test)
    if shape is None:
        return None
    kind, call, expected, bound, strict = shape
    segment = ast.get_source_segment(snippet, call)
    if segment is None or (isinstance(expected, float) and math.isnan(expected)):
        return None
    lines = pyast.source_lines(snippet)  # as `ast` numbers them (not at a form feed or U+2028)
    setup = "".join(line + "\n" for line in lines[: last.lineno - 1]) + "\n" * (call.lineno - last.lineno)
    return Check(kind, setup, segment, call.lineno, lines[call.lineno - 1], expected, bound, strict, message)
