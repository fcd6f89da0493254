"""`debug.search`: the small-edit search that `cobalt debug` runs before asking the model
(assistant/debug/edit_search.py)."""

from __future__ import annotations

from pydantic import Field

from sandbox.sandbox_settings import Section

PAIRS = (
    ("match", "search"),
    ("min", "max"),
    ("any", "all"),
    ("append", "extend"),
    ("startswith", "endswith"),
    ("lower", "upper"),
    ("keys", "values"),
    ("floor", "ceil"),
    ("break", "continue"),
    ("lstrip", "rstrip"),
    ("first", "last"),
)
SIBLINGS = {a: b for pair in PAIRS for a, b in (pair, pair[::-1])}


class SearchSettings(Section):
    """Which code is searched, how long, and the names swapped as commonly confused."""

    enabled: bool = Field(True, description="Try small edits of the implicated code before asking the model.")
    spans: int = Field(3, ge=1, description="The implicated functions or methods whose lines are searched.")
    max_runs: int = Field(300, ge=1, description="The most edits tried (each runs the whole test command).")
    max_seconds: float = Field(45, gt=0, description="The search stops after this many seconds.")
    workers: int = Field(2, ge=1, description="Edited files tested at the same time (sandbox containers).")
    run_timeout_s: float = Field(
        20, gt=0, description="Each edited file's test run stops after this many seconds (an edit can hang a loop)."
    )
    failing_first: bool = Field(
        True,
        description="Run an edited file's failing tests alone first; the whole command only when one of them passes.",
    )
    insertions: bool = Field(
        True, description="Also try edits that put back removed code (a term, a condition, a call, a slice, a width)."
    )
    hints: int = Field(
        3,
        ge=0,
        description="When no edit fixes every test, the edits that raised the passing count shown to the model.",
    )
    insert_every: int = Field(
        3, ge=0, description="One edit adding a term, condition or slice after every this many others (0: after all)."
    )
    plausible: int = Field(
        3, ge=0, description="After the first passing edit, up to this many more are sought and all ranked."
    )
    after_fix_runs: int = Field(24, ge=0, description="The most edits tried after the first passing one.")
    siblings: dict[str, str] = Field(
        default_factory=lambda: dict(SIBLINGS), description="Names tried in place of each other."
    )
