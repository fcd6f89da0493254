"""The Cobalt TUI: one main screen with the problem, its tests, the program editor, the
turn timeline, the streamed reply, the selected turn's results and a status bar.

The app only wires keys to the controller and paints what the controller says: the
loop and human turns run in thread workers (`SolveController.run_loop` / `run_human`)
whose events come back as `ControllerEvent` messages, so the UI never blocks on the
model or the sandbox. Quitting during a run asks, then stops the loop at the next token
and leaves once the finished turns are stored.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Footer, OptionList

from assistant.loop.session import ProgramExtracted, SessionEnded, TurnFinished, TurnStarted
from assistant.problems.schema import ProblemError
from assistant.settings import LoopSettings
from assistant.store.trajectory import Turn
from assistant.tui import screens
from assistant.tui.controller import SolveController, describe_error
from assistant.tui.debug_actions import DEBUG_ACTIONS, DebugActions
from assistant.tui.dialog_actions import DialogActions
from assistant.tui.events import BaselineReady, ControllerEvent, RunEnded, RunFailed, ServerProgress, TokensReady
from assistant.tui.keys import APPLY_FIX_KEY, BINDINGS, MAIN_ACTIONS, UNDO_FIX_KEY, help_rows
from assistant.tui.services import Services
from assistant.tui.views import ended_notice
from assistant.tui.widgets import (
    ProblemView,
    ProgramEditor,
    ReplyView,
    ResultsTable,
    StatusBar,
    TestsView,
    TurnTimeline,
)


def _unquoted(command: str) -> str:
    """The test command as typed, without the quotes around it when it is quoted whole
    (`--test "pytest -q"`); quotes inside it (`pytest -k "a or b"`) are the command's own."""
    if len(command) >= 2 and command[0] == command[-1] and command[0] in "'\"" and command[0] not in command[1:-1]:
        return command[1:-1]
    return command


class CobaltApp(DialogActions, DebugActions, App[int]):
    """Solve, watch, edit and resume sessions."""

    CSS_PATH = "cobalt.tcss"
    TITLE = "Cobalt"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (140, "-wide")]
    AUTO_FOCUS = "#timeline"
    BINDINGS = BINDINGS

    def __init__(
        self,
        services: Services,
        settings: LoopSettings | None = None,
        problem: str | None = None,
        cwd: Path | None = None,
        prewarm: bool = True,
        debug: tuple[Path, str, Path | None] | None = None,
    ) -> None:
        """`prewarm`: start or find the model server as soon as a problem is open; `debug`: (FILE,
        test command, project root or None) opens a debugging session instead of a problem."""
        super().__init__()
        self.controller = SolveController(services, settings or LoopSettings(), self._emit)
        self.initial_problem = problem
        self.initial_debug = debug
        self.cwd = cwd or Path.cwd()
        self.notices: list[tuple[str, str, str]] = []  # (severity, title, message), for tests and logs
        self._exit_after_run = False
        self._prewarmed_client = not prewarm
        self._status_painted = 0.0
        self._saved_program: str | None = None  # the last program saved with ctrl+s

    def _emit(self, event: Any) -> None:
        """Called from worker threads; post_message is thread-safe."""
        self.post_message(ControllerEvent(event))

    # --- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield ProblemView(id="problem")
                yield TestsView(id="tests")
                yield TurnTimeline(id="timeline")
            with Vertical(id="right"):
                yield ProgramEditor(id="editor")
                yield ResultsTable(id="results")
                yield ReplyView(id="reply")
        yield StatusBar(id="status")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.paint_status()
        self.run_worker(self.controller.prewarm_sandbox, thread=True, group="prewarm", exit_on_error=False)
        if self.initial_debug is not None:
            self.open_debug(*self.initial_debug)
        elif self.initial_problem:
            self.open_problem(self.initial_problem)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Notifications are plain text unless asked: messages quote paths and errors, where
        a `[` must not be read as markup."""
        self.notices.append((str(severity), title, message))
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def report_error(self, exc: BaseException) -> None:
        title, message = describe_error(exc)
        self.notify(message, title=title, severity="error", timeout=15)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Main-screen keys do nothing over a dialog (so the dialog gets them); the debug keys
        show only in a debug session."""
        if action in DEBUG_ACTIONS and not self.debug_open():
            return False
        if action in MAIN_ACTIONS | DEBUG_ACTIONS and len(self.screen_stack) > 1:
            return False
        return True

    # --- painting -------------------------------------------------------------------------

    def paint_status(self) -> None:
        self.query_one(StatusBar).show(self.controller.status)
        self._status_painted = time.monotonic()

    def paint_timeline(self, select: int | None = None) -> None:
        c = self.controller
        self.query_one(TurnTimeline).show(c.turns, c.problem, c.pending, select)

    async def paint_turn(self, turn: Turn | None) -> None:
        """Show one finished turn's results (and its reply unless a reply is streaming)."""
        self.query_one(ResultsTable).show(turn, self.controller.problem)
        if self.controller.pending is None:
            reply = self.query_one(ReplyView)
            if turn is None:
                await reply.show("", "Reply")
            else:
                who = {"human": "your program", "search": "small-edit search"}.get(turn.author, "model reply")
                await reply.show(turn.reply, f"Reply · turn {turn.index + 1} · {who}")

    async def paint_all(self) -> None:
        c = self.controller
        self.query_one(ProblemView).show(c.problem)
        self.query_one(TestsView).show(c.problem)
        self.paint_timeline()
        await self.paint_turn(c.turns[-1] if c.turns else None)
        editor = self.query_one(ProgramEditor)
        last = next((t for t in reversed(c.turns) if t.program), None)
        if last is not None and last.program:
            editor.load(last.program, f"turn {last.index + 1}")
        else:
            editor.load(c.problem.starter_code if c.problem else "", "starter code" if c.problem else "no program")
        self.paint_status()

    # --- events from the workers ----------------------------------------------------------

    async def on_controller_event(self, message: ControllerEvent) -> None:
        try:
            await self._handle(message.event)
        except NoMatches:  # the last events of a worker may land while the app shuts down
            if self.is_running:
                raise

    async def _handle(self, event: Any) -> None:
        c = self.controller
        if isinstance(event, TokensReady):
            text = c.take_tokens(event.segment)
            if text:
                await self.query_one(ReplyView).append(text)
            if time.monotonic() - self._status_painted > 0.25:
                self.paint_status()
            return
        c.apply(event)
        if isinstance(event, BaselineReady):
            self.query_one(ResultsTable).show_run(event.result, "your file, before any edit")
            self.query_one(ProblemView).show(c.problem, event.implicated)
            return
        if isinstance(event, TurnStarted):
            self.paint_timeline()
            previous = c.turns[-1] if c.turns else None  # stays visible while the next turn runs
            self.query_one(ResultsTable).show(previous, c.problem)  # titled with its own turn
            if event.author == "model":
                label = f" · resample {event.attempt}" if event.attempt else ""
                await self.query_one(ReplyView).start(f"Reply · turn {event.index + 1} · streaming{label}")
        elif isinstance(event, ProgramExtracted):
            self.paint_timeline()
            self._load_model_program(event)
        elif isinstance(event, TurnFinished):
            await self.query_one(ReplyView).finish()
            self.paint_timeline(select=len(c.turns) - 1)
            await self.paint_turn(event.turn)
            if event.turn.author == "human" and event.turn.program:
                self.query_one(ProgramEditor).load(event.turn.program, f"turn {event.turn.index + 1} (yours)")
        elif isinstance(event, SessionEnded):
            self._announce(event)
        elif isinstance(event, RunFailed):
            self.notify(event.message, title=event.title, severity="error", timeout=15)
        elif isinstance(event, RunEnded):
            await self.query_one(ReplyView).finish(stopped=True)
            self.paint_timeline()
            if self._exit_after_run:
                self.exit(0)
        elif isinstance(event, ServerProgress) and event.detail:
            self.notify(event.detail, title="Model server", timeout=8)
        self.paint_status()

    def _load_model_program(self, event: ProgramExtracted) -> None:
        if event.program is None or (self.controller.pending and self.controller.pending[1] == "human"):
            return
        editor = self.query_one(ProgramEditor)
        if editor.edited and editor.text.strip():
            self.notify(
                f"Kept your edits; the model's program of turn {event.index + 1} is in the timeline "
                "(enter on it loads it).",
                timeout=6,
            )
            return
        editor.load(event.program, f"turn {event.index + 1}")

    def _announce(self, event: SessionEnded) -> None:
        notice = ended_notice(event.status, self.controller.turns, self.controller.problem)
        if notice is not None:
            severity, title, message = notice
            self.notify(message, title=title, severity=severity)  # type: ignore[arg-type]

    # --- the timeline ---------------------------------------------------------------------

    async def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id != "timeline":
            return
        index = self.query_one(TurnTimeline).selected_turn()
        if index is not None and index < len(self.controller.turns):
            await self.paint_turn(self.controller.turns[index])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id != "timeline":
            return
        index = self.query_one(TurnTimeline).selected_turn()
        if index is None or index >= len(self.controller.turns):
            return
        turn = self.controller.turns[index]
        if turn.program:
            self.query_one(ProgramEditor).load(turn.program, f"turn {index + 1}")
            self.notify(f"Loaded the program of turn {index + 1} into the editor.", timeout=3)

    # --- actions --------------------------------------------------------------------------

    def open_problem(self, spec: str) -> bool:
        """Open PROBLEM (FILE, FILE#ID, HumanEval/N), or `FILE.py --test CMD`: a debug session."""
        if " --test " in f" {spec} ":
            file, _, command = spec.partition("--test")
            return self.open_debug(Path(file.strip()), _unquoted(command.strip()))
        return self._opened(lambda: self.controller.load_problem(spec), self._problem_notice)

    def open_debug(self, file: Path, test_command: str, root: Path | None = None) -> bool:
        """A debugging session on a file of the user's project (ctrl+r runs it)."""
        path = file if file.is_absolute() else self.cwd / file
        return self._opened(lambda: self.controller.open_debug(path, test_command, root), self._debug_notice)

    def _opened(self, load: Any, notice: Any) -> bool:
        try:
            problem = load()
        except ProblemError as exc:
            self.report_error(exc)
            return False
        self.call_next(self.paint_all)
        self.prewarm_client()
        notice(problem)
        return True

    def _problem_notice(self, problem: Any) -> None:
        counts = f"{len(problem.public_tests)} public and {len(problem.hidden_tests)} hidden tests"
        self.notify(f"{problem.title}: {counts}. ctrl+r runs the model.", title=f"Opened {problem.id}", timeout=5)

    def _debug_notice(self, problem: Any) -> None:
        keys = f"ctrl+r runs the tests and the model; {APPLY_FIX_KEY} writes a passing fix, {UNDO_FIX_KEY} undoes it."
        self.notify(f"{problem.target_file} · `{problem.test_command}`: {keys}", title="Debug session", timeout=8)

    def prewarm_client(self) -> None:
        """Start (or find) the model server in the background once a problem is open."""
        if not self._prewarmed_client:
            self._prewarmed_client = True
            self.run_worker(self.controller.prewarm_client, thread=True, group="prewarm", exit_on_error=False)

    def _start(self, kind: str) -> bool:
        try:
            note = self.controller.begin(kind)
        except ValueError as exc:
            self.notify(str(exc), severity="warning", timeout=5)
            return False
        if note:
            self.notify(note, timeout=5)
            self.call_next(self.paint_all)
        self.paint_status()
        return True

    def action_run(self) -> None:
        if self._start("loop"):
            self.run_worker(self.controller.run_loop, thread=True, group="loop", exit_on_error=False)

    def action_stop(self) -> None:
        if self.controller.request_stop():
            self.notify("Stopping after the current token; finished turns are kept.", timeout=4)
        else:
            self.notify("Nothing is running.", timeout=3)
        self.paint_status()

    def action_test_program(self) -> None:
        program = self.query_one(ProgramEditor).text
        if not program.strip():
            self.notify("The editor is empty: write a program first.", severity="warning", timeout=4)
            return
        if self._start("human"):
            self.run_worker(lambda: self.controller.run_human(program), thread=True, group="loop", exit_on_error=False)

    def action_help(self) -> None:
        self.push_screen(screens.HelpScreen(help_rows()))

    async def action_quit(self) -> None:
        if isinstance(self.screen, screens.ConfirmScreen):  # already asking
            return
        if self.controller.busy:
            if self._exit_after_run:  # asked twice: leave now (finished turns are already stored)
                self.exit(0)
                return
            waiting = (
                " (the model server is still starting; it keeps running for next time)"
                if self.controller.status.phase == "connecting"
                else ""
            )
            self.push_screen(
                screens.ConfirmScreen(
                    f"A run is in progress{waiting}. Stop it, keep the finished turns, and quit?",
                    yes="Stop and quit",
                    no="Keep running",
                ),
                self._quit_answer,
            )
            return
        editor = self.query_one(ProgramEditor)
        if editor.edited and editor.text.strip() and editor.text != self._saved_program:
            self.push_screen(
                screens.ConfirmScreen(
                    "Your edits to the program are neither tested nor saved. Quit anyway?", yes="Quit", no="Stay"
                ),
                self._quit_answer,
            )
            return
        self.exit(0)

    def stop_and_exit(self) -> None:
        """SIGTERM: stop a running loop (its session ends as interrupted), then quit."""
        self._quit_answer(True)

    def _quit_answer(self, yes: bool | None) -> None:
        if not yes:
            return
        if not self.controller.busy:  # the run ended while the question was open
            self.exit(0)
            return
        self._exit_after_run = True
        self.controller.request_stop()
        self.paint_status()
