"""Marks on the most suspicious lines of the code a debugging prompt shows in full: the lines that
share the line spectrum's top score (`spectrum.scored_lines`) inside the shown functions get a
trailing comment (`MARK`) when there are at most `debug.mark_lines` of them (more tied lines say
little), so the model is pointed at lines, not only at a function. Marks go only where a comment
can end a line (not inside a string, not after a backslash), and are taken out of the model's reply
before its edit is applied (`unmark`), so a copied mark never reaches the user's file.
"""

from __future__ import annotations

import io
import re
import tokenize

from assistant.debug.localize import Span
from sandbox.pyast import source_lines

MARK = "  # <- suspicious"
_MARKED = re.compile(r"[ \t]*# <- suspicious[ \t]*$", re.MULTILINE)


def commentable(source: str) -> set[int]:
    """Lines where a comment may be appended without changing the program (1-based)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return set()
    return {t.start[0] for t in tokens if t.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT)}


def pick(scored: list[tuple[int, float]], shown: list[Span], source: str, most: int) -> tuple[int, ...]:
    """The lines of `scored` ((line, score), highest first) inside a shown span that share the top
    score among those, when at most `most` do and a mark fits on each; () otherwise."""
    if most <= 0 or not shown:
        return ()
    inside = [(line, score) for line, score in scored if any(s.contains(line) for s in shown)]
    if not inside:
        return ()
    top = [line for line, score in inside if score == inside[0][1]]
    fits = commentable(source)
    return tuple(top) if len(top) <= most and all(line in fits for line in top) else ()


def mark(source: str, lines: tuple[int, ...]) -> str:
    """`source` with `MARK` after each of `lines` (1-based)."""
    if not lines:
        return source
    out = source_lines(source, keepends=True)
    for n in lines:
        if 0 < n <= len(out):
            text = out[n - 1]
            end = text[len(text.rstrip("\r\n")) :]
            out[n - 1] = text.rstrip("\r\n") + MARK + (end or "\n")
    return "".join(out)


def unmark(text: str) -> str:
    """`text` without any mark this module put on a line (a model's reply copies them)."""
    return _MARKED.sub("", text)
