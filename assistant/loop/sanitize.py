"""What of a function answer is run: its imports, definitions and constants, not the module-level
code the model added around them (its own asserts, prints, example calls, `if __name__ ==
"__main__":` blocks). A wrong example of the model's own would otherwise fail the whole run at
import, and the feedback would be about the model's test, not the user's (EvalPlus drops such code
the same way before grading). The reply and its program are stored as written; only the graded
copy is cut. Stdio programs and a user's project files are run whole: their top level is the
program.
"""

from __future__ import annotations

import ast

from sandbox import pyast
from sandbox.pyast import source_lines

KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _defined_names(tree: ast.Module) -> set[str]:
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _calls_any(node: ast.AST, names: set[str]) -> bool:
    return any(
        isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in names for sub in ast.walk(node)
    )


def _used_names(tree: ast.Module) -> set[str]:
    """The names the answer's functions and classes read (a table they look up, say)."""
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {
        sub.id
        for node in tree.body
        if isinstance(node, defs)
        for sub in ast.walk(node)
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)
    }


def _targets(node: ast.Assign | ast.AnnAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {sub.id for t in targets for sub in ast.walk(t) if isinstance(sub, ast.Name)}


def _kept(node: ast.stmt, defined: set[str], used: set[str]) -> bool:
    if isinstance(node, KEPT):
        return True
    if isinstance(node, (ast.Assign, ast.AnnAssign)):  # a constant, unless it calls the answer itself ...
        if node.value is None:
            return False
        return not _calls_any(node.value, defined) or bool(_targets(node) & used)  # ... for a name it reads
    if isinstance(node, ast.Try):  # `try: import x / except ImportError: ...`
        return all(isinstance(sub, (ast.Import, ast.ImportFrom)) for sub in node.body)
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def sanitize(program: str) -> str:
    """`program` with its top-level statements other than imports, function and class definitions,
    constants (and tables its functions read, computed by them) and docstrings blanked out (line
    numbers stay; a line that also holds a kept statement stays whole); unchanged when it does not
    parse (the run then reports the syntax error) or when nothing is cut."""
    try:
        tree = pyast.parse(program)
    except (SyntaxError, ValueError):
        return program
    defined, used = _defined_names(tree), _used_names(tree)
    kept_lines: set[int] = set()
    dropped = []
    for node in tree.body:
        lines_of = range(node.lineno - 1, node.end_lineno or node.lineno)
        if _kept(node, defined, used):
            kept_lines.update(lines_of)
        else:
            dropped.append(lines_of)
    if not dropped:
        return program
    lines = source_lines(program, keepends=True)
    for span in dropped:  # blanked, not deleted: tracebacks keep the line numbers of the reply
        for i in span:
            if i not in kept_lines:  # `import sys; sys.setrecursionlimit(9999)`: the line stays whole
                lines[i] = "\n"
    return "".join(lines)


def graded_program(program: str, kind: str, enabled: bool = True) -> str:
    """The copy of `program` that runs against the tests of a `kind` problem."""
    return sanitize(program) if enabled and kind == "function" else program
