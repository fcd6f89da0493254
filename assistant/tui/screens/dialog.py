"""What every dialog of the TUI shows first: its title in bold and, dimmed beside it, its keys."""

from __future__ import annotations

from textual.widgets import Static


def dialog_title(title: str, keys: str) -> Static:
    """The title line of a dialog box, e.g. `dialog_title("Diff", "escape closes")`."""
    return Static(f"[b]{title}[/b]   [dim]{keys}[/dim]", classes="dialog-title")
