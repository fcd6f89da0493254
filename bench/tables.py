"""The rows table the side-by-side sandbox benchmarks print (grading guards on/off, runc vs
runsc): way, tests, seconds, tests/s, correct, plus any extra integer columns; and the throughput
table of `cobalt bench sandbox`. Formats text only."""

from __future__ import annotations

from typing import Any, Sequence


def way_table(rows: Sequence[dict[str, Any]], way_width: int, extra: Sequence[str] = ()) -> list[str]:
    """The header and one line per row (`way`, `tests`, `seconds`, `tests_per_s`, `passed`,
    then the `extra` keys)."""
    lines = [
        f"{'way':<{way_width}}{'tests':>7}{'seconds':>9}{'tests/s':>9}{'correct':>9}"
        + "".join(f"{name:>9}" for name in extra)
    ]
    for row in rows:
        lines.append(
            f"{row['way']:<{way_width}}{row['tests']:>7}{row['seconds']:>9.2f}{row['tests_per_s']:>9.1f}"
            f"{row['passed']:>9}" + "".join(f"{row[name]:>9}" for name in extra)
        )
    return lines


def table(rows: list[dict[str, Any]]) -> list[str]:
    """The rows of `timed` as a text table."""
    lines = [f"{'way':<26}{'programs':>9}{'tests':>7}{'seconds':>9}{'tests/s':>9}{'correct':>9}"]
    for row in rows:
        lines.append(
            f"{row['way']:<26}{row['programs']:>9}{row['tests']:>7}{row['seconds']:>9.2f}"
            f"{row['tests_per_s']:>9.1f}{row['passed']:>9}"
        )
    return lines
