"""The results table of the selected turn: one row per public test with its input,
expected output, the program's output (or error) and status. Hidden tests never appear;
their pass count is in the title."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from assistant.problems.schema import Problem
from assistant.store.trajectory import Turn
from assistant.tui.views import counts, result_rows
from sandbox.api import RunResult


class ResultsTable(DataTable):
    """Public test results of one turn."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._shown: tuple[Turn | None, Problem | None] = (None, None)

    def on_mount(self) -> None:
        self.border_title = "Results"
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_columns("input", "expected", "actual", "status")

    def on_resize(self) -> None:
        self.show(*self._shown)

    def show(self, turn: Turn | None, problem: Problem | None, note: str = "") -> None:
        """One turn's results; `note` is added to the title (e.g. while the next turn runs)."""
        self._shown = (turn, problem)
        self.clear()
        if turn is None:
            self.border_title = "Results"
            return
        hidden = len(problem.hidden_tests) if problem else 0
        self.border_title = f"Results · turn {turn.index + 1} · hidden {counts(turn.hidden, hidden)} passed{note}"
        if turn.program is None:
            self.add_row("(no program)", "", "no code block", "∅ no code")
            return
        self._rows(turn.public)

    def show_run(self, result: RunResult, title: str) -> None:
        """A run that is no turn (a debug session's first run of the tests, on the user's file)."""
        self._shown = (None, None)
        self.clear()
        self.border_title = f"Results · {title}"
        self._rows(result)

    def _rows(self, result: RunResult | None) -> None:
        rows = result_rows(result, limit=1000)
        # The three text columns share what the status column leaves, so nothing is cut off.
        status_width = max((row.status.cell_len for row in rows), default=6)
        limit = max(6, (self.size.width - 1 - 4 * 2 * self.cell_padding - status_width) // 3)
        for row in result_rows(result, limit=limit):  # Text, not str: output is not markup
            self.add_row(Text(row.input), Text(row.expected), Text(row.actual), row.status)
