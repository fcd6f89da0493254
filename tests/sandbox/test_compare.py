"""Unit tests of the stdio comparison rules (docs/method.md); no Docker needed."""

from __future__ import annotations

import pytest

from sandbox.harness.compare import normalize, outputs_match, tokens_match


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("3\n", "3"),
        ("1 2\n3 4\n", "1 2   \n3 4\t\n\n\n"),  # trailing whitespace and blank lines
        ("\n\nhello\n", "hello"),  # surrounding blank lines
        ("0.3333333", "0.3333333333333333"),  # float tolerance (expected has a point)
        ("1.5 2.5", "1.5000001 2.4999999"),
        ("2.0", "2"),  # exact decimals: 2 == 2.0
        ("5", "5.0"),
        ("1 2\n3", "1 2 3"),  # token by token across lines
        ("-0.000000", "0.000000"),
    ],
)
def test_accepted(expected: str, actual: str) -> None:
    assert outputs_match(expected, actual)


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("1\n2\n", "2\n1\n"),  # reordered lines
        ("1 2", "2 1"),  # swapped tokens
        ("YES", "yes"),  # no case folding
        ("1000000", "1000001"),  # no tolerance for integers
        ("0.5", "0.51"),  # beyond 1e-6 relative
        ("1.0", "nan"),
        ("1.0", "inf"),
        ("1000", "1_000"),  # only plain decimal literals
        ("1 2 3", "1 2"),
        ("1 2", "1 2 3"),
        ("a b", "a  b c"),
        ("", "x"),
        ("3 3", "3"),  # no set-based matching
    ],
)
def test_rejected(expected: str, actual: str) -> None:
    assert not outputs_match(expected, actual)


def test_tolerance_is_relative_to_the_expected_value() -> None:
    assert tokens_match("1000000.0", "1000000.9")  # 9e-7 relative
    assert not tokens_match("1000000.0", "1000002.0")  # 2e-6 relative
    assert not tokens_match("0.0", "0.0000001")  # relative to zero: exact only


def test_normalize() -> None:
    assert normalize("\n a  \n\nb \n\n") == " a\n\nb"
