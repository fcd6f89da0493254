"""Modal screens of the TUI, one per file: help, confirm, open, new problem, diff, save,
stored sessions. Each collects one answer and hands it back with `dismiss`; the app and
the controller act on it."""

from assistant.tui.screens.confirm import ConfirmScreen
from assistant.tui.screens.diff import DiffScreen
from assistant.tui.screens.help import HelpScreen
from assistant.tui.screens.new_problem import NewProblemScreen
from assistant.tui.screens.open_problem import OpenProblemScreen
from assistant.tui.screens.save_solution import SaveSolutionScreen
from assistant.tui.screens.sessions import SessionsScreen

__all__ = [
    "ConfirmScreen",
    "DiffScreen",
    "HelpScreen",
    "NewProblemScreen",
    "OpenProblemScreen",
    "SaveSolutionScreen",
    "SessionsScreen",
]
