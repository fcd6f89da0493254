"""`cobalt bench turn` configuration names: baseline, all, default (what the settings serve),
no-X, and +/- expressions; a bad name is one sentence."""

from __future__ import annotations

import pytest

from assistant.errors import UserError
from assistant.settings_loader import load_settings
from bench.turn_configs import CHANGES, parse, resolve


def test_named_configurations() -> None:
    settings = load_settings()
    assert parse("baseline", settings) == frozenset() and parse("all", settings) == frozenset(CHANGES)
    assert parse("no-spec", settings) == frozenset(CHANGES) - {"spec"}
    assert parse("default", settings) == {"fence", "prompt", "repeat", "nodoc", "prefix", "preload"}  # default.yaml


def test_default_follows_the_settings_and_expressions_add_and_remove() -> None:
    settings = load_settings(
        overrides={
            "model": {"suppress_docstrings": False, "stop_on_repetition": False},
            "server": {"speculative": {"enabled": True}},
        }
    )
    assert parse("default", settings) == {"fence", "prompt", "spec", "prefix", "preload"}
    plain = load_settings()
    assert parse("default-nodoc", plain) == parse("default", plain) - {"nodoc"}
    assert parse("all-spec-nodoc", plain) == frozenset(CHANGES) - {"spec", "nodoc"}
    assert parse("baseline+fence", plain) == {"fence"} and parse("nodoc", plain) == {"nodoc"}
    assert list(resolve("baseline, default+nodoc", plain)) == ["baseline", "default+nodoc"]


@pytest.mark.parametrize(
    "name, message",
    [
        ("fast", "unknown configuration 'fast'"),
        ("default+turbo", "unknown change 'turbo'"),
        ("default++", "is not a name followed by"),
    ],
)
def test_bad_names_are_one_sentence(name: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        resolve(name, load_settings())


def test_no_configuration_is_one_sentence() -> None:
    with pytest.raises(UserError, match="no configuration given"):
        resolve(" , ", load_settings())
