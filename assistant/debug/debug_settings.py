"""The `debug:` section: how `cobalt debug` shows a user's project to the model, how its edits come
back, its turns and deadline, and the small-edit search (`debug.search`, assistant/debug/search_settings.py).
Part of `assistant.settings.Settings`, which re-exports it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assistant.debug.search_settings import SearchSettings
from sandbox.sandbox_settings import Section


class DebugSettings(Section):
    """`cobalt debug`: how a user's project is shown to the model and how its edits come back."""

    edit_format: Literal["functions", "functions_traced", "search_replace", "whole_file"] = Field(
        "functions", description="How edits are asked for (assistant/debug/edits.py's FORMATS)."
    )
    max_spans: int = Field(3, ge=1, description="The most implicated functions or methods shown in full.")
    localize: Literal["lines", "frames"] = Field(
        "lines",
        description="What leads the functions the model is shown and named first: the line spectrum's "
        "(lines) or the failing frames' (frames); the search's own order is unchanged.",
    )
    mark_lines: int = Field(
        0,
        ge=0,
        description="The lines sharing the line spectrum's top score inside the shown functions are marked with a "
        "comment when at most this many do (assistant/debug/line_marks.py; 0: none).",
    )
    failure_chars: int = Field(1500, ge=200, description="The failing test's traceback is cut to this many characters.")
    test_lines: int = Field(
        0,
        ge=0,
        description="The failing test's own code is shown up to this many lines (0: not; small models copy it).",
    )
    context_tokens: int | None = Field(None, ge=256, description="The model's context (None: ask the server).")
    turns: int | None = Field(2, ge=1, description="Most model turns of `cobalt debug` (None: loop.turns).")
    deadline_s: float = Field(
        90,
        ge=0,
        description="No model turn starts after the first when the longest so far would end past this many seconds "
        "from the run's start, the search's time included (0: no deadline).",
    )
    reply_scale: float = Field(
        1.5,
        ge=0,
        description="A model turn's reply may run to this many times the tokens of the functions the prompt may "
        "show in full (twice that in SEARCH/REPLACE blocks), plus 64, at least 256 (a longer one is a copy of the "
        "file or a loop, not a fix); 0: loop.max_tokens alone.",
    )
    paced: bool = Field(
        True,
        description="With a deadline, a model turn's prompt is cut to what the served model reads in the time left, "
        "at the pace measured on its earlier turns (assistant/debug/turn_pace.py).",
    )
    test_timeout_s: float = Field(120, gt=0, description="Seconds the project's whole test command may run.")
    per_test_timeout_s: float = Field(10, ge=0, description="Seconds one test may run; then it fails where it hangs.")
    candidates: int = Field(1, ge=1, le=16, description="Edits tried per turn; the one passing most tests is kept.")
    candidate_temperature: float = Field(
        0.8, ge=0, le=2, description="The sampling temperature of every candidate after the first."
    )
    search: SearchSettings = SearchSettings()
