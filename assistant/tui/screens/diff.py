"""Diff any two turns (or a turn and the editor): two pickers and a unified diff."""

from __future__ import annotations

from rich.syntax import Syntax
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Select, Static

from assistant.tui.screens.dialog import dialog_title
from assistant.tui.views import unified_diff


class DiffScreen(ModalScreen[None]):
    """`programs` are (label, program) pairs; the first two shown default to the last two."""

    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, programs: list[tuple[str, str]], before: int, after: int) -> None:
        super().__init__()
        self.programs, self.before, self.after = programs, before, after

    def compose(self) -> ComposeResult:
        options = [(label, i) for i, (label, _) in enumerate(self.programs)]
        with Vertical(id="diff-box", classes="dialog"):
            yield dialog_title("Diff", "pick two programs · escape closes")
            with Horizontal(classes="form-row"):
                yield Select(options, value=self.before, allow_blank=False, id="diff-before")
                yield Select(options, value=self.after, allow_blank=False, id="diff-after")
            with VerticalScroll(id="diff-scroll"):
                yield Static("", id="diff-text")

    def on_mount(self) -> None:
        self.refresh_diff()

    @on(Select.Changed)
    def _changed(self, _: Select.Changed) -> None:
        self.refresh_diff()

    def diff_text(self) -> str:
        before = int(self.query_one("#diff-before", Select).value)  # type: ignore[arg-type]
        after = int(self.query_one("#diff-after", Select).value)  # type: ignore[arg-type]
        (label_a, a), (label_b, b) = self.programs[before], self.programs[after]
        return unified_diff(a, b, label_a, label_b)

    def refresh_diff(self) -> None:
        text = self.diff_text()
        self.query_one("#diff-text", Static).update(Syntax(text, "diff", theme="monokai", word_wrap=False))

    def action_close(self) -> None:
        self.dismiss(None)
