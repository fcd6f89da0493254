"""Reading JSON Lines: one JSON value per non-blank line, each with its `FILE:LINE` place,
and the one-sentence errors for a line that is not JSON or not an object.

Used by the problem files, the trajectory import and the repair item files. It parses and
nothing more: what a value must hold, and what an empty file means, is the caller's.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator


def json_lines(
    lines: Iterable[str], where: str, error: type[Exception], must_be: str | None = None
) -> Iterator[tuple[str, int, Any]]:
    """(`where:number`, number, value) of each non-blank line. A line that is not JSON
    raises `error`; with `must_be` (e.g. "a record"), so does a value that is not an object."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        here = f"{where}:{number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{here}: not valid JSON ({exc.msg})") from None
        if must_be is not None and not isinstance(value, dict):
            raise error(f"{here}: {must_be} must be a JSON object")
        yield here, number, value
