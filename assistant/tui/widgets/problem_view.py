"""The problem statement pane: the problem's Markdown, scrollable, titled with its id."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from assistant.problems.schema import Problem

EMPTY = (
    "## No problem open\n\nOpen a problem file or pick an example with **ctrl+o**, "
    "write a new one with **ctrl+n**, or resume a stored session with **ctrl+b**. "
    "Press **f1** for every key."
)


class ProblemPane(VerticalScroll):
    """A pane on the open problem, titled `PANE_TITLE` (followed by more once a problem is shown)."""

    PANE_TITLE = ""

    def on_mount(self) -> None:
        self.border_title = self.PANE_TITLE

    def show(self, problem: Problem | None, extra: str = "") -> None:
        """`extra`: Markdown shown after the problem (e.g. the code a debug session's tests implicate)."""
        if problem is None:
            self.border_title = self.PANE_TITLE
            self.show_nothing()
        else:
            self.show_problem(problem, extra)

    def show_nothing(self) -> None:
        raise NotImplementedError

    def show_problem(self, problem: Problem, extra: str = "") -> None:
        raise NotImplementedError


class ProblemView(ProblemPane):
    """Shows one problem's statement."""

    PANE_TITLE = "Problem"

    def compose(self) -> ComposeResult:
        yield Markdown(EMPTY, id="statement")

    def show_nothing(self) -> None:
        self.query_one("#statement", Markdown).update(EMPTY)

    def show_problem(self, problem: Problem, extra: str = "") -> None:
        self.border_title = f"Problem · {problem.id}"
        difficulty = f" · {problem.difficulty}" if problem.difficulty else ""
        entry = f" · `{problem.entry_point}`" if problem.entry_point else ""
        more = f"\n\n{extra}" if extra else ""
        markdown = self.query_one("#statement", Markdown)
        markdown.update(f"### {problem.title}\n*{problem.kind}{entry}{difficulty}*\n\n{problem.statement}{more}")
        self.scroll_home(animate=False)
