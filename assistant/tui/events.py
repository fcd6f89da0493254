"""Events the controller sends to the app from its worker threads, on top of the
Session's own events (TurnStarted, TokenStreamed, ProgramExtracted, TurnFinished,
SessionEnded). They all travel inside one Textual message, `ControllerEvent`, posted with
the thread-safe `post_message`, so the app sees them in order on its own thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class ServerProgress:
    """The model server is starting / ready, or a line of its start-up progress."""

    state: str
    detail: str = ""
    model: str | None = None  # the served model (or adapter) name, once ready
    adapter: str | None = None


@dataclass
class RunFailed:
    """A run could not go on; `message` says what to do (shown as a notification)."""

    title: str
    message: str


@dataclass
class TokensReady:
    """Streamed text is waiting in the controller's buffer (`take_tokens(segment)`). At
    most one is in flight per segment, so a fast model cannot flood the app's queue and
    delay key presses behind thousands of token messages."""

    segment: int
    index: int


@dataclass
class RunEnded:
    """A loop or human-turn worker finished (after any RunFailed)."""

    kind: str  # "loop" | "human"
    status: str | None  # the session's status, None when no session ran
    session_id: str | None = None


@dataclass
class BaselineReady:
    """A debug session's first run of the project's tests, on the file as given, and the code it
    implicates (shown before the model's first turn)."""

    result: Any
    implicated: str


class ControllerEvent(Message):
    """Carries one controller or session event to the app."""

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event
