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

KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _defined_names(tree: ast.Module) -> set[str]:
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _calls_any(node: ast.AST, names: set[str]) -> bool:
    return any(
        isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in names for sub in ast.walk(node)
    )


def _kept(node: ast.stmt, defined: set[str]) -> bool:
    if isinstance(node, KEPT):
        return True
    if isinstance(node, (ast.Assign, ast.AnnAssign)):  # a constant, unless it calls the answer itself
        return node.value is not None and not _calls_any(node.value, defined)
    if isinstance(node, ast.Try):  # `try: import x / except ImportError: ...`
        return all(isinstance(sub, (ast.Import, ast.ImportFrom)) for sub in node.body)
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def sanitize(program: str) -> str:
    """`program` with its top-level statements other than imports, function and class definitions,
    constants and docstrings blanked out (line numbers stay); unchanged when it does not parse (the
    run then reports the syntax error) or when nothing is cut."""
    try:
        tree = pyast.parse(program)
    except (SyntaxError, ValueError):
        return program
    defined = _defined_names(tree)
    dropped = [node for node in tree.body if not _kept(node, defined)]
    if not dropped:
        return program
    lines = program.splitlines(keepends=True)
    for node in dropped:  # blanked, not deleted: tracebacks keep the line numbers of the reply
        for i in range(node.lineno - 1, node.end_lineno or node.lineno):
            lines[i] = "\n"
    return "".join(lines)


def graded_program(program: str, kind: str, enabled: bool = True) -> str:
    """The copy of `program` that runs against the tests of a `kind` problem."""
    return sanitize(program) if enabled and kind == "function" else program
