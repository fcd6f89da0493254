"""The one way to open a debug session, for `cobalt debug`, the TUI and `cobalt bench debug`: the
debug settings with the caller's choices (edit format, candidates, the small-edit search), the
client without the docstring ban (a user's own file keeps its docstrings), the prompt budget of the
served model and its measured pace (assistant/debug/turn_pace.py), and the session of the chosen
edit format: a `DebugSession` for a format that edits the file, the plain loop session for
`whole_file` (the reply is the file)."""

from __future__ import annotations

import copy
from typing import Any

from assistant.debug.debug_session import DebugSession
from assistant.debug.edits import edit_format as format_named
from assistant.debug.model_budget import budget_for
from assistant.debug.turn_pace import PaceBook
from assistant.interfaces import ChatModel, Runner
from assistant.loop.session import Session
from assistant.problems.schema import Problem
from assistant.settings import DebugSettings, LoopSettings, Settings
from sandbox.api import RunResult


def debug_settings(
    settings: Settings, edit_format: str | None = None, candidates: int | None = None, search: bool | None = None
) -> DebugSettings:
    """`settings.debug` with the caller's choices; `search` False turns the small-edit search off,
    True turns it on, None keeps `debug.search.enabled`."""
    debug = settings.debug
    enabled = debug.search.enabled if search is None else search
    return debug.model_copy(
        update={
            "edit_format": format_named(edit_format or debug.edit_format).name,
            "candidates": candidates or debug.candidates,
            "search": debug.search.model_copy(update={"enabled": enabled}),
        }
    )


def without_docstring_ban(client: Any) -> Any:
    """`client` as a debug session uses it: no logit bias (a copy when it has one, so a client the
    TUI shares with task sessions keeps its own)."""
    if client is None or not getattr(client, "logit_bias", None):
        return client
    found = copy.copy(client)
    found.logit_bias = None
    return found


def open_debug_session(
    problem: Problem,
    client: ChatModel | None,
    runner: Runner,
    settings: Settings,
    before: RunResult,
    *,
    loop: LoopSettings | None = None,
    debug: DebugSettings | None = None,
    source: str,
    **kwargs: Any,
) -> Session:
    """The session that fixes `problem`'s file, whose tests ran once already (`before`); `loop`
    and `debug` default to the settings' sections; `kwargs` go to the session (stream,
    subscriber, meta)."""
    loop = loop or settings.loop
    debug = debug or debug_settings(settings)
    client = without_docstring_ban(client)
    if not format_named(debug.edit_format).edits:
        meta = {**kwargs.pop("meta", {}), "edit_format": debug.edit_format}
        return Session(problem, client, runner, loop, source=source, meta=meta, **kwargs)
    budget = budget_for(client, settings)  # type: ignore[arg-type]
    pace = None
    if client is not None and debug.paced:
        pace = PaceBook.for_endpoint(settings.paths.data_dir, client.display_name, getattr(client, "api_base", None))
    return DebugSession(problem, client, runner, loop, debug, budget, before, pace, source=source, **kwargs)  # type: ignore[arg-type]
