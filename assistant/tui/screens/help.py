"""The help screen: every key of the main screen (read from the app's bindings, so it
cannot drift from them) and a few words on how a session works."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from assistant.tui.screens.dialog import dialog_title

ABOUT = (
    "Run (ctrl+r) asks the model for up to T turns: each program runs on the public tests in the "
    "Docker sandbox and the first failure goes back to the model, until every public test passes. "
    "Edit the program yourself and run the tests (ctrl+t) to add a turn of your own. "
    "Every finished turn is stored; browse and resume sessions with ctrl+b."
)


class HelpScreen(ModalScreen[None]):
    """Lists key bindings; any of escape, f1, q closes it."""

    BINDINGS = [Binding("escape,f1,q,question_mark", "close", "Close")]

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box", classes="dialog"):
            yield dialog_title("Cobalt keys", "(escape closes)")
            yield DataTable(id="help-keys", show_cursor=False, zebra_stripes=True)
            with VerticalScroll(id="help-about"):
                yield Static(ABOUT)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("key", "action")
        for key, description in self.keys:
            table.add_row(key, description)

    def action_close(self) -> None:
        self.dismiss(None)
