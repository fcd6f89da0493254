"""Every key of the main screen in one place: the footer, the help screen and the app's
`check_action` all read these, so they cannot disagree. Main-screen keys are priority
bindings (they work inside the editor) and use ctrl/function keys, which typing never
produces; over a dialog they step aside so the dialog gets them. The debug session's file keys
are function keys: ctrl+z and ctrl+a are the editor's own (undo, line start), and a person
undoing their typing must not rewrite their file on disk."""

from __future__ import annotations

from textual.binding import Binding

APPLY_FIX_KEY, UNDO_FIX_KEY = "f2", "f3"
BINDINGS: list[Binding | tuple[str, str] | tuple[str, str, str]] = [
    Binding("f1", "help", "Help", priority=True),
    Binding("ctrl+o", "open", "Open", priority=True),
    Binding("ctrl+n", "new_problem", "New", priority=True),
    Binding("ctrl+r", "run", "Run", priority=True),
    Binding("ctrl+k", "stop", "Stop", priority=True),
    Binding("ctrl+t", "test_program", "Test edit", priority=True),
    Binding("ctrl+d", "diff", "Diff", priority=True),
    Binding("ctrl+s", "save", "Save", priority=True),
    Binding("ctrl+b", "sessions", "Sessions", priority=True),
    Binding(APPLY_FIX_KEY, "apply_fix", "Apply fix", priority=True),  # debug sessions only (tui.debug_actions)
    Binding(UNDO_FIX_KEY, "undo_fix", "Undo fix", priority=True),
    Binding("ctrl+q", "quit", "Quit", priority=True),
    Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
]
MAIN_ACTIONS = {"help", "open", "new_problem", "run", "stop", "test_program", "diff", "save", "sessions"}
DESCRIPTIONS = {
    "help": "this screen",
    "open": "open a problem file or an example",
    "new_problem": "write a new problem",
    "run": "run the loop (up to T more model turns)",
    "stop": "stop the loop (finished turns are kept)",
    "test_program": "run the tests on the edited program (a turn of yours)",
    "diff": "diff two turns",
    "save": "accept the program and save it to a file",
    "sessions": "browse stored sessions, resume one",
    "apply_fix": "debug session: write the passing fix into your file (a backup is kept)",
    "undo_fix": "debug session: restore the file as it was before the last written fix",
    "quit": "quit (asks during a run)",
}
EXTRA_KEYS = [
    ("enter (on a turn)", "load that turn's program into the editor"),
    ("↑ ↓ (on the turns)", "show a turn's reply and results"),
    ("tab / shift+tab", "move between panes"),
]


def help_rows() -> list[tuple[str, str]]:
    """(key, what it does) for the help screen."""
    rows = [(b.key, f"{b.description}: {DESCRIPTIONS.get(b.action, '')}") for b in BINDINGS if isinstance(b, Binding)]
    return rows + EXTRA_KEYS
