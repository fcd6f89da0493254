"""The TUI's logic, kept out of the widgets: which problem and session are open, starting
and stopping the loop, running a person's program as a human turn, resuming a stored
session, and turning failures into a title plus what to do.

Two sides, never mixed up:
- the app's thread calls `load_problem`, `open_session`, `begin`, `request_stop`, `apply`
  (which folds each event into the view state: turns, streamed text, status bar);
- a worker thread calls `run_loop` / `run_human`, which block on the model and the
  sandbox and report through `emit` (the app's thread-safe `post_message`).

Stopping: the Session has no stop hook, so the forwarder that relays its events raises
`StopRequested` (a KeyboardInterrupt) at the next turn start or streamed token; the loop
then marks the session `interrupted`, keeping every finished turn in the store.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Callable

from assistant.debug.debug_session import DebugSession
from assistant.debug.edit_search import SearchFinished, SearchStarted
from assistant.debug.file_view import KEPT_ONLY, render
from assistant.debug.fix_file import debug_problem, project_root
from assistant.debug.localize import Span
from assistant.debug.open_session import open_debug_session
from assistant.debug.project_runs import LimitedRunner, baseline_run
from assistant.loop.recorder import record, resume
from assistant.loop.session import ProgramExtracted, Session, SessionEnded, TokenStreamed, TurnFinished, TurnStarted
from assistant.problems.resolve import load_problem
from assistant.problems.schema import Problem
from assistant.settings import LoopSettings
from assistant.store import trajectory as states
from assistant.store.trajectory import SessionRecord, Turn
from assistant.store.trajectory_db import StoreError
from assistant.tui.events import BaselineReady, RunEnded, RunFailed, ServerProgress, TokensReady
from assistant.tui.services import Services
from assistant.tui.views import StatusInfo

Emit = Callable[[Any], None]


def implicated_markdown(problem: Problem, spans: list[Span]) -> str:
    """The code the failing tests point at, as the problem pane shows it."""
    if not spans:
        return "The failing tests do not point at one function of the file; the model sees all of it."
    names = ", ".join(f"`{s.qualname}` (lines {s.start}-{s.end})" for s in spans)
    code = render(problem.starter_code, spans, KEPT_ONLY)
    return f"**The failing tests point at** {names}:\n\n```python\n{code}```"


class StopRequested(KeyboardInterrupt):
    """Raised inside the loop's thread to stop it between tokens or turns."""


def describe_error(exc: BaseException) -> tuple[str, str]:
    """A notification title and a message that says what to do."""
    return describe(type(exc).__name__, str(exc), isinstance(exc, OSError))


def describe_status(status: str, error: str | None) -> tuple[str, str]:
    """The same for a session that ended with an error status."""
    name = {states.MODEL_ERROR: "LLMError", states.SANDBOX_ERROR: "SandboxError"}.get(status, "Error")
    return describe(name, error or status)


def describe(name: str, message: str, os_error: bool = False) -> tuple[str, str]:
    text = message.strip().rstrip(".") or name
    if name == "SandboxError":
        return "Sandbox unavailable", f"{text}. Is Docker running? Check with `cobalt sandbox check`."
    if name in ("ServerError", "ModelError"):
        return "Model server unavailable", f"{text}. Start it with `cobalt serve`, or pick another model with --model."
    if name == "LLMError":
        return "Model error", f"{text}. Check the server (`cobalt serve`) and run again (ctrl+r)."
    if name == "ProblemError":
        return "Bad problem file", f"{text}. Fix the file, or open another problem (ctrl+o)."
    if name == "StoreError":
        return "Trajectory store error", text
    if os_error:
        return "File error", f"{text}."
    return "Unexpected error", (
        f"{name}: {text}. Finished turns are stored; run with COBALT_DEBUG=1 for a traceback and report it."
    )


class SolveController:
    """The state of one TUI window and the work its actions start."""

    def __init__(self, services: Services, settings: LoopSettings, emit: Emit) -> None:
        self.services = services
        self.settings = settings
        self.emit = emit
        self.problem: Problem | None = None
        self.session: Session | None = None
        self.resume_id: str | None = None
        self.turns: list[Turn] = []
        self.busy: str | None = None  # "loop" | "human" while a worker runs
        self.stopping = False
        self.pending: tuple[int, str, str] | None = None  # (index, author, phase) of the turn in flight
        self.reply = ""  # text streamed so far for the turn in flight
        self.status = StatusInfo(model=services.model_name, turns=settings.turns)
        self.debug_file: Path | None = None  # set by `open_debug`: the user's file the session edits
        self._stop = threading.Event()
        self._tokens: dict[int, list[str]] = {}  # segment -> streamed text not yet painted
        self._segment = 0  # bumped by every other event, so tokens never cross a turn boundary
        self._tokens_lock = threading.Lock()
        self._turn_clock = 0.0
        self._chunks = 0

    # --- app thread: what is open ---------------------------------------------------------

    def load_problem(self, spec: str) -> Problem:
        """Open a problem (FILE, FILE#ID or HumanEval/N). Raises ProblemError."""
        problem = load_problem(spec)
        self.set_problem(problem)
        return problem

    def open_debug(self, file: Path, test_command: str, root: Path | None = None) -> Problem:
        """Open a debugging session on a file of the user's project. Raises ProblemError."""
        root = (root or project_root(file)).resolve()
        problem = debug_problem(file, test_command, root)
        self.set_problem(problem)
        self.debug_file = file.resolve()
        return problem

    def set_problem(self, problem: Problem) -> None:
        self.debug_file = None
        self.problem = problem
        self.session, self.resume_id, self.turns = None, None, []
        self.status.turn, self.status.phase = 0, "idle"

    def open_session(self, session_id: str) -> SessionRecord:
        """Show a stored session; the next run or human turn continues it (Session.resume)."""
        record = self.services.store().session(session_id)
        if record.problem is None:
            raise StoreError(f"the problem of session {record.id} is missing from the store")
        self.set_problem(record.problem)
        if record.problem.source == "debug" and record.problem.project_dir and record.problem.target_file:
            self.debug_file = Path(record.problem.project_dir) / record.problem.target_file
        self.resume_id, self.turns = record.id, list(record.turns)
        self.status.turn, self.status.phase = len(self.turns), record.status
        return record

    def sessions(self, limit: int = 200) -> list[SessionRecord]:
        """Stored sessions, newest first."""
        return self.services.store().sessions(limit=limit, with_turns=True)[::-1]

    @property
    def passed(self) -> bool:
        return bool(self.turns) and self.turns[-1].passed_public

    # --- app thread: starting and stopping work ------------------------------------------

    def begin(self, kind: str) -> str | None:
        """Get ready to start a worker of `kind`; returns a note for the user (or None).
        Raises ValueError with a sentence when it cannot start."""
        if self.problem is None:
            raise ValueError("Open a problem first (ctrl+o), or write one (ctrl+n).")
        if self.busy:
            raise ValueError("A run is in progress: wait for it or stop it (ctrl+k).")
        note = None
        if kind == "loop" and self.passed:
            self.session, self.resume_id, self.turns = None, None, []
            note = "The last session passed; starting a new session on this problem."
        self.busy, self.stopping = kind, False
        self._stop.clear()
        self.status.turns = len(self.turns) + (self.settings.turns if kind == "loop" else 1)
        self.status.phase = "connecting" if kind == "loop" else "testing"
        return note

    def request_stop(self) -> bool:
        """Ask the running loop to stop; False when nothing runs."""
        if not self.busy:
            return False
        self.stopping = True
        self._stop.set()
        self.status.phase = "stopping"
        return True

    # --- worker threads -------------------------------------------------------------------

    def _forward(self, event: Any) -> None:
        """Relay a Session event to the app (worker thread); tokens are batched."""
        if self._stop.is_set() and self.busy == "loop" and isinstance(event, (TurnStarted, TokenStreamed)):
            raise StopRequested()
        if isinstance(event, TokenStreamed):
            with self._tokens_lock:
                pending = self._tokens.setdefault(self._segment, [])
                pending.append(event.text)
                first, segment = len(pending) == 1, self._segment
            if first:
                self.emit(TokensReady(segment, event.index))
            return
        with self._tokens_lock:
            self._segment += 1
        self.emit(event)

    def take_tokens(self, segment: int) -> str:
        """App thread: the text streamed in `segment` since the last call."""
        with self._tokens_lock:
            chunks = self._tokens.pop(segment, [])
        self.reply += "".join(chunks)
        self._chunks += len(chunks)
        elapsed = time.monotonic() - self._turn_clock
        if chunks and elapsed > 0.2:
            self.status.tokens_per_s = self._chunks / elapsed
            self.status.tokens, self.status.elapsed_s = self._chunks, elapsed
        return "".join(chunks)

    def _session(self, client: Any, sandbox: Any) -> Session:
        assert self.problem is not None
        store = self.services.store()
        if self.problem.source == "debug" and (self.resume_id is not None or self.session is None):
            session = record(self._debug_session(client, sandbox), store)
            if self.resume_id is not None:
                session.id, session.turns = self.resume_id, list(self.turns)
                store.set_status(self.resume_id, states.RUNNING)
                self.resume_id = None
        elif self.resume_id is not None:
            session = resume(
                store, self.resume_id, client, sandbox, self.settings, subscriber=self._forward, stream=True
            )
            self.resume_id = None
        elif self.session is None:
            session = record(
                Session(
                    self.problem, client, sandbox, self.settings, source="tui", subscriber=self._forward, stream=True
                ),
                store,
            )
        else:
            session = self.session
            if client is not None and session.client is None:
                session.client = client
                session.adapter_version = getattr(client, "adapter_version", None)
        self.session = session
        return session

    def _debug_session(self, client: Any, sandbox: Any) -> Session:
        """A debug session: the tests run first on the user's file (shown at once), then edits."""
        assert self.problem is not None
        settings = self.services.settings
        runner = LimitedRunner.of(sandbox, settings.sandbox.limits, settings.debug)
        before = baseline_run(runner, self.problem)
        session = open_debug_session(
            self.problem, client, runner, settings, before, loop=self.settings, source="tui", subscriber=self._forward
        )
        spans = session.implicated_spans() if isinstance(session, DebugSession) else []
        self.emit(BaselineReady(before, implicated_markdown(self.problem, spans)))
        return session

    def _client(self) -> Any:
        def progress(line: str) -> None:
            state = line if line in ("starting", "ready") else self.services.server_state
            self.emit(ServerProgress(state, "" if line in ("starting", "ready") else line))

        client = self.services.client(progress)
        self.emit(
            ServerProgress(
                "ready", model=getattr(client, "display_name", None), adapter=getattr(client, "adapter_version", None)
            )
        )
        return client

    def prewarm_sandbox(self) -> None:
        """Worker: open the sandbox early, so a missing Docker engine is reported at once."""
        try:
            self.services.sandbox()
        except Exception as exc:
            self.emit(RunFailed(*describe_error(exc)))

    def prewarm_client(self) -> None:
        """Worker: start or find the model server while the person reads the problem."""
        try:
            self._client()
        except Exception as exc:
            self.emit(RunFailed(*describe_error(exc)))
            self.emit(ServerProgress(self.services.server_state))

    def run_loop(self) -> None:
        """Worker: up to T more model turns (stops early on a pass or a stop request)."""
        status, session = None, None
        try:
            sandbox = self.services.sandbox()
            client = self._client()
            if self._stop.is_set():
                return
            session = self._session(client, sandbox)
            status = session.run(max_turns=len(session.turns) + self.settings.turns)
            if status in (states.MODEL_ERROR, states.SANDBOX_ERROR, states.ERROR):
                self.emit(RunFailed(*describe_status(status, session.error)))
        except StopRequested:
            status = states.INTERRUPTED
        except Exception as exc:  # never let a worker take the UI down
            self.emit(RunFailed(*describe_error(exc)))
            status = session.status if session is not None else None
        finally:
            self.emit(RunEnded("loop", status, session.id if session else None))

    def run_human(self, program: str) -> None:
        """Worker: run the person's program on the tests and store it as a human turn."""
        status, session = None, None
        try:
            sandbox = self.services.sandbox()
            session = self._session(self.services.client_if_ready(), sandbox)
            session.human_turn(program)
            status = session.finish(states.PASSED if session.passed else states.UNSOLVED)
        except Exception as exc:
            self.emit(RunFailed(*describe_error(exc)))
            status = session.status if session is not None else None
        finally:
            self.emit(RunEnded("human", status, session.id if session else None))

    # --- app thread: folding events into the view state -----------------------------------

    def apply(self, event: Any) -> None:
        s = self.status
        if isinstance(event, TurnStarted):
            self.pending = (event.index, event.author, "generating" if event.author == "model" else "testing")
            self.reply, self._chunks, self._turn_clock = "", 0, time.monotonic()
            s.turn, s.phase = event.index + 1, self.pending[2]
            s.turns = max(s.turns, event.index + 1)
            if event.attempt:
                s.phase = f"resampling ({event.attempt})"
        elif isinstance(event, ProgramExtracted):
            if self.pending is not None:
                self.pending = (self.pending[0], self.pending[1], "testing")
            s.phase = "testing"
        elif isinstance(event, TurnFinished):
            self.turns.append(event.turn)
            self.pending = None
            if event.turn.author == "model" and event.turn.latency_s > 0 and event.turn.tokens:
                s.tokens_per_s = event.turn.tokens / event.turn.latency_s
                s.tokens, s.elapsed_s = event.turn.tokens, event.turn.latency_s
            s.turn = len(self.turns)
            s.phase = "stopping" if self.stopping else ("generating" if self.busy == "loop" else s.phase)
        elif isinstance(event, SearchStarted):
            s.phase = f"trying small edits of {len(event.functions)} function(s), {event.lines} lines"
        elif isinstance(event, SearchFinished):
            s.phase = f"small edits: {event.found}" if event.found else f"no small edit fixes it ({event.tried} tried)"
        elif isinstance(event, SessionEnded):
            self.pending = None
            stopped = self.session.meta.get("deadline") if self.session is not None else None
            # a debug run that ended before its last turn because of `debug.deadline_s` says so
            s.phase = event.status + (f" (no time for another turn: {stopped['seconds']:g} s)" if stopped else "")
        elif isinstance(event, ServerProgress):
            s.server = event.state
            s.model = event.model or s.model
            s.adapter = event.adapter or s.adapter
        elif isinstance(event, RunEnded):
            self.busy, self.stopping, self.pending = None, False, None
            if s.phase in ("connecting", "stopping", "testing", "generating"):
                s.phase = event.status or "idle"
            if s.server == "starting" and event.status is None:
                s.server = self.services.server_state
