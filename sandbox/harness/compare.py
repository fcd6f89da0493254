"""Output comparison for stdio tests (stdlib only; shipped into the sandbox image).

Rules, in order (docs/method.md):
1. exact match after stripping trailing whitespace on every line and blank lines around
   the whole output;
2. otherwise token by token, in order: equal strings match; two tokens that both parse as
   plain decimal numbers match if they are equal as exact decimals, or, only when the
   expected token has a decimal point, if they differ by at most 1e-6 relative to the
   expected value.

Deliberately absent: set-based, sorted or order-free matching, case folding, and any
tolerance for integers. Those make graders hackable.
"""

from __future__ import annotations

REL_TOL = "1e-6"
NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"


def normalize(text: str) -> str:
    """Strip trailing whitespace per line and leading/trailing blank lines."""
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _number(token: str):
    """The token as a Decimal if it is a plain decimal literal (no nan, inf, or 1_000)."""
    import re  # imported here: the harness runs per exec and most outputs match exactly
    from decimal import Decimal

    return Decimal(token) if re.fullmatch(NUMBER, token) else None


def tokens_match(expected: str, actual: str) -> bool:
    """One token pair under rule 2."""
    if expected == actual:
        return True
    want, got = _number(expected), _number(actual)
    if want is None or got is None:
        return False
    if want == got:
        return True
    if "." not in expected:
        return False
    from decimal import Decimal

    return abs(got - want) <= Decimal(REL_TOL) * abs(want)


def outputs_match(expected: str, actual: str) -> bool:
    """True when `actual` is an acceptable program output for `expected`."""
    if normalize(expected) == normalize(actual):
        return True
    want, got = expected.split(), actual.split()
    if len(want) != len(got):
        return False
    return all(tokens_match(w, g) for w, g in zip(want, got))
