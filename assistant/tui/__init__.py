"""The Textual TUI (`cobalt`, `cobalt tui [PROBLEM]`): solve a problem with the model,
watch each turn stream and run, edit the program yourself, diff turns, save the solution,
and resume stored sessions.

`CobaltApp` is the app, `SolveController` its logic and `Services` what it opens (model
client, sandbox, store). Widgets live in `widgets/` (one per file), dialogs in `screens/`,
the look in `cobalt.tcss`.
"""

from assistant.tui.app import CobaltApp
from assistant.tui.controller import SolveController
from assistant.tui.services import Openers, Services

__all__ = ["CobaltApp", "Openers", "SolveController", "Services"]
