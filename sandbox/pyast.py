"""`ast.parse` that is safe to call from several threads at once.

CPython 3.11's `ast.parse` is not: two threads parsing at the same time can fail with
`SystemError: AST constructor recursion depth mismatch` (seen in the debug search, which prepares
two edited files side by side, and in `cobalt eval` of the repair benchmark, whose 8 sessions in
flight compare programs by `extract.code_key`). Every parse in the host process goes through
`parse`, under one lock; a parse takes milliseconds, so the lock costs nothing measurable.
`source_lines` splits source into the lines those parses number.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec") -> Any:
    """`ast.parse(source, filename, mode)` under the process-wide lock."""
    with LOCK:
        return ast.parse(source, filename, mode)


def source_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines of `text` as Python numbers them (`ast`'s `lineno`): split at `\\n` only, where
    `str.splitlines` also splits at a form feed, `\\x1c`-`\\x1e`, `\\x85` and U+2028/2029."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]] if keepends else lines[:-1]
    return out + [lines[-1]] if lines[-1] else out
