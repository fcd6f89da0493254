"""The TUI's dialog keys: open a problem, write a new one, diff turns, save the program, browse
and resume stored sessions. Mixed into the app, which provides `controller`, `cwd`, `notify`,
`push_screen`, `open_problem`, `paint_all`, `prewarm_client` and `action_run`. Opening something else
asks first when the editor holds edits that are neither tested nor saved."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from assistant.store.trajectory_db import StoreError
from assistant.tui import screens
from assistant.tui.problem_files import default_solution_path, examples, save_program
from assistant.tui.views import diff_choices, save_note
from assistant.tui.widgets import ProgramEditor


class DialogActions:
    """Actions that open a dialog and act on its answer."""

    controller: Any
    cwd: Path
    _saved_program: str | None

    def _idle(self) -> bool:
        """True when no run is in flight; else says so (opening something else must wait)."""
        if self.controller.busy:
            self.notify("A run is in progress: wait for it or stop it (ctrl+k) first.", severity="warning", timeout=4)
        return not self.controller.busy

    def _edits_given_up(self, then: Callable[[], None]) -> None:
        """`then()`, once the user agrees to lose editor edits that are neither tested nor saved
        (opening something else reloads the editor); at once when there are none."""
        editor = self.query_one(ProgramEditor)
        if not (editor.edited and editor.text.strip() and editor.text != self._saved_program):
            then()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                then()

        question = "Your edits to the program are neither tested nor saved. Open something else anyway?"
        self.push_screen(screens.ConfirmScreen(question, yes="Open", no="Keep editing"), answered)

    def action_open(self) -> None:
        def chosen(spec: str | None) -> None:
            if spec:
                self.open_problem(spec)

        if self._idle():
            self._edits_given_up(lambda: self.push_screen(screens.OpenProblemScreen(examples(self.cwd)), chosen))

    def action_new_problem(self) -> None:
        def saved(path: Path | None) -> None:
            if path is not None and self.open_problem(str(path)):
                self.notify(f"Saved the new problem to {path}.", title="Problem saved", timeout=6)

        if self._idle():
            self._edits_given_up(lambda: self.push_screen(screens.NewProblemScreen(self.cwd / "problems"), saved))

    def action_diff(self) -> None:
        editor = self.query_one(ProgramEditor)
        programs, before, after = diff_choices(self.controller.turns, editor.text, editor.edited)
        if len(programs) < 2:
            self.notify("Nothing to compare yet: run a turn first.", severity="warning", timeout=4)
            return
        self.push_screen(screens.DiffScreen(programs, before, after))

    def action_save(self) -> None:
        editor, c = self.query_one(ProgramEditor), self.controller
        if c.problem is None or not editor.text.strip():
            self.notify("No program to save yet.", severity="warning", timeout=4)
            return
        note = save_note(editor.text, c.turns, c.problem)
        program = editor.text

        def chosen(path: Path | None) -> None:
            if path is None:
                return
            if path.expanduser().is_file():

                def answered(yes: bool | None) -> None:
                    if yes:
                        write(path)

                question = f"{path} exists. Replace it with this program? (No backup is kept.)"
                self.push_screen(screens.ConfirmScreen(question, yes="Replace", no="Cancel"), answered)
                return
            write(path)

        def write(path: Path) -> None:
            try:
                saved, replaced = save_program(program, path)
            except OSError as exc:
                self.report_error(exc)
                return
            self._saved_program = program
            self.notify(
                f"Saved to {saved}" + (" (replaced the old file)." if replaced else "."),
                title="Solution saved",
                timeout=6,
            )

        self.push_screen(screens.SaveSolutionScreen(default_solution_path(c.problem, self.cwd), note), chosen)

    def action_sessions(self) -> None:
        if not self._idle():
            return
        try:
            records = self.controller.sessions()
        except StoreError as exc:
            self.report_error(exc)
            return
        self._edits_given_up(lambda: self.push_screen(screens.SessionsScreen(records), self._session_chosen))

    def _session_chosen(self, choice: tuple[str, str] | None) -> None:
        if choice is None:
            return
        how, session_id = choice
        try:
            record = self.controller.open_session(session_id)
        except StoreError as exc:
            self.report_error(exc)
            return
        self.call_next(self.paint_all)
        self.prewarm_client()
        if how == "resume":
            self.call_next(self.action_run)
        else:
            self.notify(
                f"Session {record.id[:8]} ({record.status}, {len(record.turns)} turns). ctrl+r continues "
                "it; ctrl+t adds your own turn.",
                title=f"Opened {record.problem_id}",
                timeout=6,
            )
