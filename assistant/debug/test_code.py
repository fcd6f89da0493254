"""The source of a failing test, read from the user's project on the host (a file is read, nothing
runs): the test function, or the method of its test class, named by the pytest node id
(`tests/test_x.py::TestY::test_z[param]`), cut to a few lines. It shows the model what the test
expects, which the one failing line of a short traceback often does not.
"""

from __future__ import annotations

import ast
from pathlib import Path

from sandbox import pyast
from sandbox.pyast import source_lines


def test_source(project_dir: str | Path | None, node_id: str, max_lines: int = 30, line: int | None = None) -> str:
    """The test's source ('' when the file or the function cannot be found or parsed). A longer
    test keeps its `def` line and the lines up to `line` (the failing line of the file), else its
    first lines."""
    if not project_dir or "::" not in node_id:
        return ""
    file, *names = node_id.split("[", 1)[0].split("::")
    path = Path(project_dir) / file
    try:
        text = path.read_text(encoding="utf-8")
        body = pyast.parse(text).body
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return ""
    node: ast.AST | None = None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for name in names:
        node = next((n for n in body if isinstance(n, kinds) and n.name == name), None)
        if node is None:
            return ""
        body = getattr(node, "body", [])
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    lines = source_lines(text)[start - 1 : node.end_lineno]
    indent = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
    lines = [ln[indent:] for ln in lines]
    if len(lines) > max_lines:
        at = line - start if line is not None and start <= line <= (node.end_lineno or start) else None
        head = node.lineno - start + 1  # decorators and the def line
        if at is not None and at >= max_lines:
            lines = lines[:head] + ["    ...  # (cut)"] + lines[at - (max_lines - head) + 2 : at + 1]
        else:
            lines = lines[:max_lines] + ["    ...  # (cut)"]
    return "\n".join(lines) + "\n"
