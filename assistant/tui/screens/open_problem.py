"""Open a problem: pick an example from examples/problems, or type a path (FILE, FILE#ID,
HumanEval/N). Dismisses with the spec to load; the app loads it and reports errors."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from assistant.tui.problem_files import Example
from assistant.tui.screens.dialog import dialog_title


class OpenProblemScreen(ModalScreen[str | None]):
    """Examples list plus a path field."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, examples: list[Example]) -> None:
        super().__init__()
        self.examples = examples

    def compose(self) -> ComposeResult:
        with Vertical(id="open-box", classes="dialog"):
            yield dialog_title("Open a problem", "enter opens · tab switches · escape cancels")
            yield Input(placeholder="path/to/problem.yaml (or FILE#ID, HumanEval/N)", id="open-path")
            yield Static(f"Examples ({len(self.examples)})", classes="dialog-label")
            options = [Option(f"{e.id:<20} {e.kind:<8} {e.title}", id=str(i)) for i, e in enumerate(self.examples)]
            yield OptionList(*options, id="open-examples")

    def on_mount(self) -> None:
        if self.examples:
            self.query_one(OptionList).focus()
        else:
            self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(str(self.examples[int(event.option.id or 0)].path))

    def action_cancel(self) -> None:
        self.dismiss(None)
