"""Browse stored sessions (newest first): enter opens one in the main screen, r resumes
it at once (continues the loop from its last turn)."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from assistant.store.trajectory import SessionRecord
from assistant.tui.screens.dialog import dialog_title


class SessionsScreen(ModalScreen[tuple[str, str] | None]):
    """Dismisses with ("open" | "resume", session id), or None."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("r", "choose('resume')", "Resume"),
        Binding("o", "choose('open')", "Open"),
    ]

    def __init__(self, records: list[SessionRecord]) -> None:
        super().__init__()
        self.records = records

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-box", classes="dialog"):
            yield dialog_title(
                f"Stored sessions ({len(self.records)})", "enter/o opens · r resumes the loop · escape cancels"
            )
            if self.records:
                yield DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
            else:
                yield Static("No stored sessions yet: run the loop on a problem first (ctrl+r).")

    def on_mount(self) -> None:
        if not self.records:
            return
        table = self.query_one(DataTable)
        table.add_columns("started", "id", "problem", "model", "status", "turns", "public")
        for r in self.records:
            summary = r.summary()
            cells = (
                time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started_at)),
                r.id[:8],
                r.problem_id,
                r.model,
                r.status,
                str(summary["turns"]),
                f"{summary['public_pass_rate']:.0%}",
            )
            table.add_row(*(Text(cell) for cell in cells), key=r.id)  # Text: ids are not markup
        table.focus()

    def _current(self) -> str | None:
        if not self.records:
            return None
        table = self.query_one(DataTable)
        return self.records[table.cursor_row].id if table.row_count else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_choose("open")

    def action_choose(self, how: str) -> None:
        current = self._current()
        if current is not None:
            self.dismiss((how, current))

    def action_cancel(self) -> None:
        self.dismiss(None)
