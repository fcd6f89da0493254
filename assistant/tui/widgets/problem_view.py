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


class ProblemView(VerticalScroll):
    """Shows one problem's statement."""

    def compose(self) -> ComposeResult:
        yield Markdown(EMPTY, id="statement")

    def on_mount(self) -> None:
        self.border_title = "Problem"

    def show(self, problem: Problem | None, extra: str = "") -> None:
        markdown = self.query_one("#statement", Markdown)
        if problem is None:
            self.border_title = "Problem"
            markdown.update(EMPTY)
            return
        self.border_title = f"Problem · {problem.id}"
        difficulty = f" · {problem.difficulty}" if problem.difficulty else ""
        entry = f" · `{problem.entry_point}`" if problem.entry_point else ""
        more = f"\n\n{extra}" if extra else ""
        markdown.update(f"### {problem.title}\n*{problem.kind}{entry}{difficulty}*\n\n{problem.statement}{more}")
        self.scroll_home(animate=False)
