"""The tests pane: the public tests in full, the hidden tests only as a count."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from assistant.problems.schema import Problem
from assistant.tui.views import test_lines


class TestsView(VerticalScroll):
    """Lists a problem's public tests."""

    __test__ = False  # not a pytest class

    def compose(self) -> ComposeResult:
        yield Static("", id="tests-text")

    def on_mount(self) -> None:
        self.border_title = "Tests"

    def show(self, problem: Problem | None) -> None:
        text = self.query_one("#tests-text", Static)
        if problem is None:
            self.border_title = "Tests"
            text.update("")
            return
        self.border_title = f"Tests · {len(problem.public_tests)} public · {len(problem.hidden_tests)} hidden"
        text.update(test_lines(problem))  # long tests wrap; only huge ones are cut
