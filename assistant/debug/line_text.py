"""Text positions of one source line for the search's edits (small_edits.py, insert_edits.py):
ast's byte offsets as character offsets, a node's span on its line, and a splice."""

from __future__ import annotations

import ast


def splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def char_col(line: str, byte_col: int) -> int:
    """ast's byte offset as a character offset of `line`."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def segment(line: str, node: ast.AST) -> tuple[int, int] | None:
    """(start, end) of `node` in `line`, or None when the node spans several lines."""
    if getattr(node, "lineno", None) != getattr(node, "end_lineno", None):
        return None
    return char_col(line, node.col_offset), char_col(line, node.end_col_offset)  # type: ignore[attr-defined]


def wrapped(text: str, node: ast.AST) -> str:
    """`text` (the source of `node`) in parentheses unless it is one operand already."""
    simple = isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.Subscript))
    return text if simple else f"({text})"


def source_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines of `text` as Python numbers them (`ast`'s `lineno`): split at `\\n` only, where
    `str.splitlines` also splits at a form feed, `\\x1c`-`\\x1e`, `\\x85` and U+2028/2029."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]] if keepends else lines[:-1]
    return out + [lines[-1]] if lines[-1] else out
