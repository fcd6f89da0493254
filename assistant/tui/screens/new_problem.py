"""Write a new problem: id, title, kind, entry point, statement and tests in a form;
ctrl+s validates it with the problem loader, saves it as YAML and opens it. Mistakes are
shown in the form, which stays open."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Select, Static, TextArea

from assistant.problems.schema import ProblemError
from assistant.tui.problem_files import OUTPUT_SEPARATOR, TEST_SEPARATOR, build_problem, save_problem
from assistant.tui.screens.dialog import dialog_title

HINTS = {
    "stdio": f"one test: its input, a line {OUTPUT_SEPARATOR}, the expected output; "
    f"separate tests with a line {TEST_SEPARATOR}",
    "function": "one assert per line, e.g. assert add(1, 2) == 3",
}


class NewProblemScreen(ModalScreen[Path | None]):
    """Dismisses with the saved file's path (None when cancelled)."""

    BINDINGS = [Binding("ctrl+s", "save", "Save", priority=True), Binding("escape", "cancel", "Cancel")]

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory

    def compose(self) -> ComposeResult:
        with Vertical(id="new-box", classes="dialog"):
            yield dialog_title("New problem", "ctrl+s saves and opens · escape cancels")
            with VerticalScroll(id="new-form"):
                with Horizontal(classes="form-row"):
                    yield Input(placeholder="id, e.g. add-two", id="new-id")
                    yield Input(placeholder="title", id="new-title")
                with Horizontal(classes="form-row"):
                    yield Select(
                        [("stdio: reads stdin, prints", "stdio"), ("function: asserts", "function")],
                        value="stdio",
                        allow_blank=False,
                        id="new-kind",
                    )
                    yield Input(placeholder="function name (function kind)", id="new-entry", disabled=True)
                yield Static("Statement (Markdown)", classes="dialog-label")
                yield TextArea(id="new-statement", classes="form-text")
                yield Static("Public tests: " + HINTS["stdio"], id="new-public-label", classes="dialog-label")
                yield TextArea(id="new-public", classes="form-text")
                yield Static("Hidden tests (optional; same syntax; empty: the public tests)", classes="dialog-label")
                yield TextArea(id="new-hidden", classes="form-text")
                yield Input(placeholder=f"file to save (default {self.directory}/<id>.yaml)", id="new-path")
                yield Static("", id="new-error")
            with Horizontal(classes="buttons"):
                yield Button("Save (ctrl+s)", id="new-save", variant="primary")
                yield Button("Cancel (esc)", id="new-cancel")

    def on_mount(self) -> None:
        self.query_one("#new-id", Input).focus()

    @on(Select.Changed, "#new-kind")
    def _kind_changed(self, event: Select.Changed) -> None:
        kind = str(event.value)
        self.query_one("#new-entry", Input).disabled = kind != "function"
        self.query_one("#new-public-label", Static).update("Public tests: " + HINTS.get(kind, ""))

    def fields(self) -> dict[str, str]:
        return {
            "id": self.query_one("#new-id", Input).value,
            "title": self.query_one("#new-title", Input).value,
            "kind": str(self.query_one("#new-kind", Select).value),
            "entry_point": self.query_one("#new-entry", Input).value,
            "statement": self.query_one("#new-statement", TextArea).text,
            "public": self.query_one("#new-public", TextArea).text,
            "hidden": self.query_one("#new-hidden", TextArea).text,
        }

    def action_save(self) -> None:
        error = self.query_one("#new-error", Static)
        try:
            problem, data = build_problem(self.fields())
            typed = self.query_one("#new-path", Input).value.strip()
            path = Path(typed) if typed else self.directory / f"{problem.id.replace('/', '_')}.yaml"
            saved = save_problem(data, path)
        except (ProblemError, OSError) as exc:
            error.update(Text(str(exc), style="red"))
            return
        self.dismiss(saved)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "new-save":
            self.action_save()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
