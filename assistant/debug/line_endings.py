"""A user's file keeps its own line endings through a fix: the fix is made on the text as Python
reads it (every ending as `\\n`), and is written back with each unchanged line's own ending, so a
file that mixes CRLF and LF lines changes only where the fix changed it. A new or changed line
takes the ending of the line it replaces, or of the line before it."""

from __future__ import annotations

import difflib
import re
from collections import Counter

_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")


def split_endings(raw: str) -> list[tuple[str, str]]:
    """`raw`'s lines as (text, ending) pairs, splitting where Python's universal newlines do; the
    last line's ending is "" when the text does not end with one."""
    pairs = [(m.group(1), m.group(2)) for m in _LINE.finditer(raw)]
    if pairs and pairs[-1] == ("", ""):
        pairs.pop()  # the empty match at the very end
    return pairs


def with_endings(text: str, raw: str) -> str:
    """`text` (newlines as `\\n`, a fix of `raw`) with `raw`'s line endings, line by line."""
    old = split_endings(raw)
    kinds = Counter(end for _, end in old if end)
    if len(kinds) <= 1:  # one kind of ending (or none): it holds for every line
        ending = next(iter(kinds), "\n")
        return text.replace("\n", ending) if ending != "\n" else text
    common = kinds.most_common(1)[0][0]
    lines = text.split("\n")
    last_open = lines[-1] != ""  # the text does not end with a newline
    lines = lines if last_open else lines[:-1]
    endings = [common] * len(lines)
    matcher = difflib.SequenceMatcher(None, [t for t, _ in old], lines, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(j1, j2):
            if op == "equal":
                source = i1 + k - j1
            elif op == "replace":
                source = min(i1 + k - j1, i2 - 1)
            else:  # insert: the line before it
                source = i1 - 1
            if 0 <= source < len(old) and old[source][1]:
                endings[k] = old[source][1]
    if last_open:
        endings[-1] = ""
    return "".join(line + end for line, end in zip(lines, endings))
