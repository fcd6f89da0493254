"""Accept a solution: ask where to save the program (a .py file)."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from assistant.tui.screens.dialog import dialog_title


class SaveSolutionScreen(ModalScreen[Path | None]):
    """A path field prefilled with a default; enter saves, escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, default: Path, note: str) -> None:
        super().__init__()
        self.default, self.note = default, note

    def compose(self) -> ComposeResult:
        with Vertical(id="save-box", classes="dialog"):
            yield dialog_title("Accept and save the solution", "enter saves · escape cancels")
            yield Static(self.note, id="save-note")
            yield Input(str(self.default), id="save-path")

    def on_mount(self) -> None:
        field = self.query_one("#save-path", Input)
        field.focus()
        field.cursor_position = len(field.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(Path(event.value.strip()))

    def action_cancel(self) -> None:
        self.dismiss(None)
