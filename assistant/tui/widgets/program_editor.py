"""The program pane: a Python code editor (syntax-highlighted by tree-sitter when the
`tree-sitter-python` package is installed). It remembers the last program it was given,
so the app can tell whether the person edited it."""

from __future__ import annotations

from textual.widgets import TextArea


class ProgramEditor(TextArea):
    """Edits the current program."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(
            "",
            language="python",
            theme="monokai",
            soft_wrap=False,
            tab_behavior="indent",
            show_line_numbers=True,
            **kwargs,
        )  # type: ignore[arg-type]
        self.loaded = ""
        self.source_label = "no program"

    def on_mount(self) -> None:
        self.border_title = "Program"

    def load(self, program: str, label: str) -> None:
        """Replace the text with a program from `label` (e.g. "turn 2", "starter code")."""
        self.loaded, self.source_label = program, label
        self.load_text(program)
        self.border_title = f"Program · {label}"

    @property
    def edited(self) -> bool:
        return self.text != self.loaded

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        suffix = " · edited (ctrl+t runs the tests)" if self.edited else ""
        self.border_title = f"Program · {self.source_label}{suffix}"
