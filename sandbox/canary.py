"""Hidden tamper canaries (docs/method.md): tests that no honest program can pass.

Every job may carry one canary, placed at a random position among its tests and shaped like
them, so a program cannot tell it apart from the inside:
- function: a real test's setup and call, asserted (in the program's process, like a test
  that cannot be judged outside) to equal a fresh random value. A program that forges the
  harness' "passed" record, or reads the expected value from its caller's constants,
  passes it;
- stdio: a real test's input with a random expected output (compared outside, as always;
  a program that escaped to the harness and forged its comparison passes it);
- pytest: an extra test file next to the project's, named and importing like one of them,
  whose test fails. A program that rewrites pytest's reports makes it pass.
If a canary passes, the run is `tampered` (sandbox/grading.py). Canaries never appear in a
RunResult. Not here: the wire format (sandbox/protocol.py) or judging (sandbox/grading.py).
"""

from __future__ import annotations

import ast
import os
import random
from dataclasses import dataclass

from sandbox import pyast
from sandbox.api import TestCase
from sandbox.checks import Check

_RNG = random.SystemRandom()
SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache", ".tox"}
SUFFIXES = ("regression", "edge_cases", "extra", "more", "cases")


@dataclass
class PytestCanary:
    path: str  # relative to the project root, "/"-separated
    source: str

    def owns(self, node_id: str | None) -> bool:
        """Whether a result (a pytest node id, or a collection error's name) is this canary's."""
        name = node_id or ""
        module = self.path[:-3].replace("/", ".")
        return name.split("::")[0] == self.path or name == module or name.startswith(module + ".")


def fresh_value(like: object = None) -> object:
    """A value no honest program returns for a real call: a random int (6 to 12 digits),
    float, bytes or word (6 to 14 letters), of `like`'s type where it is one of those."""
    kind = type(like) if type(like) in (int, float, str, bytes) else _RNG.choice((int, str))
    digits = _RNG.randint(6, 12)
    number = _RNG.randrange(10 ** (digits - 1), 10**digits)
    word = "".join(_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_RNG.randint(6, 14)))
    return {int: number, float: number / 1000, str: word, bytes: word.encode()}[kind]


class _Refresh(ast.NodeTransformer):
    """Every int/float/str/bytes literal -> a fresh value of its type."""

    def __init__(self) -> None:
        self.changed = 0

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if type(node.value) in (int, float, str, bytes):
            self.changed += 1
            return ast.copy_location(ast.Constant(fresh_value(node.value)), node)
        return node


def _parts(snippet: str) -> tuple[str, ast.stmt] | None:
    """(setup lines, last statement) of a snippet whose last statement starts its own line."""
    try:
        tree = pyast.parse(snippet)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not tree.body or (len(tree.body) > 1 and (tree.body[-2].end_lineno or 0) >= tree.body[-1].lineno):
        return None
    last = tree.body[-1]
    return "".join(line + "\n" for line in pyast.source_lines(snippet)[: last.lineno - 1]), last


def _same_shape(snippet: str) -> str | None:
    """The snippet with the expected side of its last `assert X == E` / `X in E` freshly
    randomised: an object that equals anything, or a forged record, passes it; an honest
    program does not."""
    parts = _parts(snippet)
    if parts is None:
        return None
    setup, last = parts
    test = last.test if isinstance(last, ast.Assert) else None
    if not (isinstance(test, ast.Compare) and all(isinstance(op, (ast.Eq, ast.In)) for op in test.ops)):
        return None
    refresh = _Refresh()
    test.comparators = [refresh.visit(c) for c in test.comparators]
    if not refresh.changed:
        return None
    last.msg = None
    return setup + ast.unparse(last) + "\n"


def _first_call(snippet: str) -> str | None:
    """`assert CALL == fresh`, CALL the first call of the snippet's last statement."""
    parts = _parts(snippet)
    if parts is None:
        return None
    setup, last = parts
    call = next((n for n in ast.walk(last) if isinstance(n, ast.Call)), None)
    if call is None:
        return None
    return f"{setup}assert {ast.unparse(call)} == {fresh_value()!r}\n"


def function_canary(cases: list[TestCase], checks: list[Check | None]) -> str | None:
    """A canary snippet shaped like one of the tests (preferring those that run whole in the
    program's process, the ones a program can fool); None if no test has a usable shape."""
    inside = [c.code or "" for c, check in zip(cases, checks) if check is None]
    for pool in (inside, [c.code or "" for c in cases]):
        options = [code for code in (_same_shape(s) or _first_call(s) for s in pool) if code]
        if options:
            return _RNG.choice(options)
    return None


def stdio_canary(cases: list[TestCase]) -> TestCase | None:
    """A real test's input with a random expected output: random words, one more than the
    real output has tokens, so a comparison rejects it at once (no number parsing)."""
    if not cases:
        return None
    case = _RNG.choice(cases)
    words = [str(fresh_value("")) for _ in range(len((case.output or "").split()) + 1)]
    return TestCase(input=case.input or "", output=" ".join(words) + "\n")


def _test_files(root: str) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        found += [
            os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
            for f in sorted(filenames)
            if f.endswith(".py") and (f.startswith("test_") or f.endswith("_test.py"))
        ]
    return found


def pytest_canary(project_dir: str) -> PytestCanary | None:
    """A failing test file beside the project's last test file (in pytest's collection order,
    so with `-x` it runs after every real test), named after it and importing what it
    imports (inside the test, so a failing import cannot abort the collection)."""
    root = os.path.abspath(project_dir)
    files = _test_files(root)
    if not files:
        return None
    model = max(files, key=lambda path: path.split("/"))
    try:
        with open(os.path.join(root, model), encoding="utf-8") as fh:
            tree = pyast.parse(fh.read())
    except (OSError, UnicodeError, SyntaxError, ValueError):
        tree = ast.Module(body=[], type_ignores=[])
    imports = [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    tests = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    directory, stem = os.path.split(model)
    taken = set(files)
    for suffix in _RNG.sample(SUFFIXES, len(SUFFIXES)):
        path = "/".join(p for p in (directory, f"{stem[:-3]}_{suffix}.py") if p)
        if path not in taken:
            break
    else:
        return None
    name = f"{_RNG.choice(tests) if tests else 'test_' + stem[5:-3]}_{_RNG.choice(SUFFIXES)}"
    body = "".join(f"    {line}\n" for line in imports)
    body += f"    expected = {fresh_value()!r}\n    assert {fresh_value()!r} == expected\n"
    return PytestCanary(path, f"def {name}():\n{body}")
