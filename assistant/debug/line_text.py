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
