"""The configurations `cobalt bench turn` compares: sets of latency changes, named as
`baseline` (none), `all`, `default` (what the settings serve now), `no-X` (all but X) or an
expression adding and removing changes, e.g. `default+nodoc` or `baseline+fence-prompt`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assistant.errors import UserError

if TYPE_CHECKING:
    from assistant.settings import Settings

CLIENT_CHANGES = ("fence", "prompt", "repeat", "nodoc")  # the client and the loop: one server serves both sides
SERVER_CHANGES = ("spec", "prefix", "preload")
CHANGES = CLIENT_CHANGES + SERVER_CHANGES
NAMED = ("baseline", "all", "default", *(f"no-{c}" for c in CHANGES))


def defaults(settings: Settings) -> frozenset[str]:
    """The changes the current settings have on (the configured prompt style counts as on)."""
    m, s = settings.model, settings.server
    on = {
        "prompt",
        "fence" if m.stop_at_fence else "",
        "repeat" if m.stop_on_repetition else "",
        "nodoc" if m.suppress_docstrings else "",
        "spec" if s.speculative.enabled else "",
        "prefix" if s.prefix_caching else "",
        "preload" if s.preload else "",
    }
    return frozenset(on - {""})


def _base(name: str, settings: Settings) -> frozenset[str]:
    if name == "baseline":
        return frozenset()
    if name == "all":
        return frozenset(CHANGES)
    if name == "default":
        return defaults(settings)
    if name.startswith("no-") and name[3:] in CHANGES:
        return frozenset(CHANGES) - {name[3:]}
    if name in CHANGES:
        return frozenset({name})
    raise UserError(
        f"unknown configuration {name!r}; use {', '.join(NAMED)}, a change ({', '.join(CHANGES)}) "
        "or an expression such as default+nodoc"
    )


def parse(name: str, settings: Settings) -> frozenset[str]:
    """The changes one configuration name switches on."""
    match = re.fullmatch(r"(no-[a-z]+|[a-z]+)((?:[+-][a-z]+)*)", name)
    if match is None:
        raise UserError(f"configuration {name!r} is not a name followed by +change/-change parts, e.g. default+nodoc")
    on = set(_base(match[1], settings))
    for sign, change in re.findall(r"([+-])([a-z]+)", match[2]):
        if change not in CHANGES:
            raise UserError(f"configuration {name!r}: unknown change {change!r}; use {', '.join(CHANGES)}")
        (on.add if sign == "+" else on.discard)(change)
    return frozenset(on)


def resolve(names: str, settings: Settings) -> dict[str, frozenset[str]]:
    """{name: changes} for a comma-separated list of configuration names (one sentence on error)."""
    chosen = [n.strip() for n in names.split(",") if n.strip()]
    if not chosen:
        raise UserError(f"no configuration given; use {', '.join(NAMED)} or an expression such as default+nodoc")
    return {n: parse(n, settings) for n in chosen}
