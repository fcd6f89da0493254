"""The TUI's keys for a debugging session on a file of the user's project: write the passing fix
into the file (a backup is kept; a git file with uncommitted changes is refused) and undo the last
written fix. They only show, and only act, while a debug session is open."""

from __future__ import annotations

from typing import Any

from assistant.debug.applied import DirtyFile, apply_change, journal_dir, undo_last
from assistant.debug.fix_file import best_turn
from assistant.errors import UserError
from assistant.tui import screens
from assistant.tui.keys import UNDO_FIX_KEY
from assistant.tui.widgets.program_editor import ProgramEditor

DEBUG_ACTIONS = {"apply_fix", "undo_fix"}


class DebugActions:
    """Mixed into the app: `controller`, `notify` and `services` come from it."""

    controller: Any

    def debug_open(self) -> bool:
        return self.controller.debug_file is not None

    def action_apply_fix(self) -> None:
        c = self.controller
        if c.debug_file is None:
            return
        command = str(c.problem.test_command) if c.problem is not None else None
        best = best_turn(c.turns, getattr(c.session, "first_run", None), command)
        if best is None or not best.passed_public or best.program is None:
            self.notify("No turn passes every test yet; nothing to write.", severity="warning", timeout=5)  # type: ignore[attr-defined]
            return
        shown = self.query_one(ProgramEditor).text  # type: ignore[attr-defined]
        passing = [t for t in c.turns if t.passed_public and t.program is not None]
        mine = next((t for t in reversed(passing) if t.program == shown), None)
        if mine is not None:  # the passing program in the editor (the person's own tidied one too)
            self._write_fix(str(mine.program), dirty_ok=False)
            return
        by = {"search": "the search", "human": "you"}.get(best.author, "the model")
        question = (
            f"The editor does not show the fix to be written: turn {best.index + 1}'s program (by {by}), the first "
            f"to pass every test. Write it into {c.debug_file.name}? (Open turn {best.index + 1} to see it first.)"
        )
        self._ask_then_write(question, str(best.program), dirty_ok=False)

    def _ask_then_write(self, question: str, program: str, dirty_ok: bool) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self._write_fix(program, dirty_ok=dirty_ok)

        self.push_screen(screens.ConfirmScreen(question, yes="Write", no="Cancel"), answered)  # type: ignore[attr-defined]

    def _write_fix(self, program: str, dirty_ok: bool) -> None:
        """Write `program` over the debug file; a file with uncommitted git changes is written only
        once the person says yes (a backup is kept either way)."""
        c = self.controller
        try:
            original = c.problem.starter_code if c.problem is not None else None
            journal = journal_dir(c.services.settings.paths.data_dir)
            backup = apply_change(c.debug_file, program, journal, original=original, dirty_ok=dirty_ok)
        except DirtyFile:
            question = (
                f"{c.debug_file.name} has uncommitted changes. Write the fix over them anyway? A backup is kept "
                f"and {UNDO_FIX_KEY} restores it."
            )
            self._ask_then_write(question, program, dirty_ok=True)
            return
        except UserError as exc:
            self.notify(str(exc), title="Not written", severity="error", timeout=10)  # type: ignore[attr-defined]
            return
        written = f"Wrote {c.debug_file} (backup {backup.name}); {UNDO_FIX_KEY} undoes it."
        self.notify(written, title="Fix applied", timeout=8)  # type: ignore[attr-defined]

    def action_undo_fix(self) -> None:
        c = self.controller
        if c.debug_file is None:
            return
        try:
            message = undo_last(journal_dir(c.services.settings.paths.data_dir), c.debug_file)
        except UserError as exc:
            self.notify(str(exc), title="Nothing undone", severity="warning", timeout=8)  # type: ignore[attr-defined]
            return
        self.notify(message[:1].upper() + message[1:] + ".", title="Undone", timeout=8)  # type: ignore[attr-defined]
