"""The tests pane: the public tests in full, the hidden tests only as a count."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from assistant.problems.schema import Problem
from assistant.tui.views import test_lines
from assistant.tui.widgets.problem_view import ProblemPane


class TestsView(ProblemPane):
    """Lists a problem's public tests."""

    __test__ = False  # not a pytest class
    PANE_TITLE = "Tests"

    def compose(self) -> ComposeResult:
        yield Static("", id="tests-text")

    def show_nothing(self) -> None:
        self.query_one("#tests-text", Static).update("")

    def show_problem(self, problem: Problem, extra: str = "") -> None:
        self.border_title = f"Tests · {len(problem.public_tests)} public · {len(problem.hidden_tests)} hidden"
        self.query_one("#tests-text", Static).update(test_lines(problem))  # long tests wrap; only huge ones are cut
