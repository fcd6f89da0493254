"""The forked child of the sandbox harness (stdlib only; runs inside the container).

`run_child` gives the program fresh std streams and a fresh `__main__` module whose file is
`/work/solution.py`, runs it (and, for function tests, the assert snippet), mimics the
interpreter's exit (SystemExit codes, tracebacks without harness frames, non-daemon
threads, atexit), writes one record with the test's nonce on fd 3 and `_exit`s. Functions
it needs are bound before untrusted code runs, so patching `sys.exit`, `os._exit` or
`os.write` changes nothing. A *value* test (its expected value stays outside: the host
sent only the setup and the call) evaluates the call and records its result as plain data
(sandbox/harness/plain.py) for the grader to compare. In any other snippet `assert L == R`
is rewritten to record L's value on failure. Records are NUL-separated fields, so neither
side needs `json` (imports cost time per exec).
"""

from __future__ import annotations

import builtins
import io
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
WORK, PROGRAM_FILE = "/work", "solution.py"
EQ_NAME = "__cobalt_eq__"
RECORD_FIELDS = ("n", "o", "e", "c", "a", "x", "v")  # nonce, outcome, exception, exit code, actual,
#                                                     expected, value (plain data, value tests)


def record_bytes(*fields: object) -> bytes:
    return "\0".join(str(f).replace("\0", "\\x00") for f in fields).encode("utf-8", "backslashreplace")


def parse_record(raw: bytes, nonce: str) -> dict | None:
    """The child's single record for this nonce; None if absent, forged or ambiguous."""
    parts = raw.decode("utf-8", "replace").split("\0")
    if len(parts) != len(RECORD_FIELDS) or parts[0] != nonce:
        return None
    return {k: (v or None) for k, v in zip(RECORD_FIELDS, parts)}


def _exit_status(exc: SystemExit, stderr) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    try:
        print(exc.code, file=stderr)
    except BaseException:
        pass
    return 1


def _print_tb(exc: BaseException, stderr) -> None:
    tb = exc.__traceback__
    while tb is not None and os.path.dirname(tb.tb_frame.f_code.co_filename) == HERE:
        tb = tb.tb_next  # hide the harness: the user sees their own frames only
    try:
        import traceback

        traceback.print_exception(type(exc), exc, tb, file=stderr)
    except BaseException:
        pass


def _safe_repr(value) -> str:
    try:
        text = repr(value)
    except BaseException as exc:
        text = f"<repr failed: {type(exc).__name__}>"
    return text if len(text) <= 1000 else text[:500] + " ... " + text[-400:]


def _make_eq(state: dict):
    def eq(actual, expected) -> bool:
        same = bool(actual == expected)
        if same and type(actual).__module__ == "__main__" and type(expected).__module__ == "builtins":
            same = type(expected).__eq__(expected, actual) is True  # an "always equal" object
        if not same and "a" not in state:
            state["a"], state["x"] = _safe_repr(actual), _safe_repr(expected)
        return same

    return eq


def compile_snippet(snippet: str, value: bool = False):
    """Compile an assert snippet, rewriting `assert L == R` to `assert __cobalt_eq__(L, R)`.
    A value test (`value`) is setup statements then one expression: (setup code, expression code)."""
    import ast

    if value:
        tree = ast.parse(snippet, "<test>")
        if not tree.body or not isinstance(tree.body[-1], ast.Expr):
            raise ValueError("a value test must end with an expression")
        last = ast.Expression(tree.body.pop().value)
        return (
            compile(tree, "<test>", "exec", dont_inherit=True, optimize=0),
            compile(last, "<test>", "eval", dont_inherit=True, optimize=0),
        )

    class EqRewriter(ast.NodeTransformer):
        def visit_Assert(self, node: ast.Assert) -> ast.Assert:
            self.generic_visit(node)
            test = node.test
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                call = ast.Call(ast.Name(EQ_NAME, ast.Load()), [test.left, test.comparators[0]], [])
                node.test = ast.copy_location(call, test)
            return node

    tree = EqRewriter().visit(ast.parse(snippet, "<test>"))
    return compile(ast.fix_missing_locations(tree), "<test>", "exec", dont_inherit=True, optimize=0)


def run_child(code, snippet, nonce: str, snippet_src: str = "") -> None:
    """Runs in the forked child: the program, then the snippet (a code object, or for a value
    test a (setup, expression) pair); never returns."""
    from sandbox.harness.plain import NotPlain, encode

    _exit, _write, _record, _encode, _tuple, _done = os._exit, os.write, record_bytes, encode, tuple, _Done
    status, record = 1, _record(nonce, "exit", "", "", "", "", "")
    memory_record = _record(nonce, "exc", "MemoryError", "", "", "", "")
    if snippet is not None:
        import linecache

        linecache.cache["<test>"] = (len(snippet_src), None, snippet_src.splitlines(True), "<test>")
    stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
    stderr = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )
    sys.stdin = sys.__stdin__ = stdin
    sys.stdout = sys.__stdout__ = stdout
    sys.stderr = sys.__stderr__ = stderr
    main = types.ModuleType("__main__")
    main.__file__, main.__builtins__ = os.path.join(WORK, PROGRAM_FILE), builtins
    sys.modules["__main__"] = main
    for name in [m for m in sys.modules if m == "sandbox" or m.startswith("sandbox.")]:
        sys.modules.pop(name, None)
    sys.argv[:] = [main.__file__]
    sys.path[:] = [WORK] + [p for p in sys.path if p not in (os.path.dirname(HERE), "")]
    state: dict = {}
    try:
        try:
            exec(code, main.__dict__)
            value = ""
            if type(snippet) is _tuple:
                exec(snippet[0], main.__dict__)
                try:
                    value = _encode(eval(snippet[1], main.__dict__))
                except NotPlain as exc:
                    record = _record(nonce, "unplain", "", 0, str(exc), "", "")
                    raise _done from None
            elif snippet is not None:
                main.__dict__[EQ_NAME] = _make_eq(state)
                exec(snippet, main.__dict__)
            status, record = 0, _record(nonce, "ok", "", 0, "", "", value)
        except _done:
            status = 0
        except SystemExit as exc:
            status = _exit_status(exc, stderr)
            record = _record(nonce, "exit", "", status, "", "", "")
        except MemoryError as exc:
            _write(3, memory_record)
            record = None
            main.__dict__.clear()
            _print_tb(exc, stderr)
        except BaseException as exc:
            record = _record(nonce, "exc", type(exc).__name__, 1, state.get("a", ""), state.get("x", ""), "")
            _print_tb(exc, stderr)
        if record is not None:
            _write(3, record)
        for finish in (_finish_threads, stdout.flush, stderr.flush, sys.stdout.flush):
            try:
                finish()
            except BaseException:
                pass
    finally:
        _exit(status)


class _Done(Exception):
    """The test's outcome is recorded; skip to the exit (never raised by the program)."""


def _finish_threads() -> None:
    """Like interpreter shutdown: wait for non-daemon threads, run atexit handlers."""
    if "threading" in sys.modules:
        sys.modules["threading"]._shutdown()
    import atexit

    atexit._run_exitfuncs()
