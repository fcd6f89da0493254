"""The record types of a stored trajectory: a `Turn` (one attempt, by the model or a human)
and a `SessionRecord` (one problem, one model, a list of turns). Shared by the loop, the
store, export/import, the TUI and the trainer; plain data, no behaviour beyond (de)serialising.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from assistant.messages.shapes import Message
from assistant.problems.schema import Problem
from sandbox.api import RunResult

# Session statuses. `passed`: every public test passed (hidden results are stored per turn);
# `unsolved`: the turn budget ran out; errors end a session early, keeping finished turns.
RUNNING, PASSED, UNSOLVED = "running", "passed", "unsolved"
MODEL_ERROR, SANDBOX_ERROR, INTERRUPTED = "model_error", "sandbox_error", "interrupted"
ERROR = "error"  # an unexpected failure of Cobalt itself
STATUSES = (RUNNING, PASSED, UNSOLVED, MODEL_ERROR, SANDBOX_ERROR, INTERRUPTED, ERROR)
SOURCES = (
    "tui",
    "cli",
    "collect",
    "eval",
    "debug",
    "import",
    "synthetic",
    "bench",
)  # synthetic: trainer/repair/curriculum.py
AUTHORS = ("model", "human")
# The Turn fields kept in the store's meta_json column, in their order there.
TURN_META = ("temperature", "top_p", "resamples", "repeated", "finish_reason", "prompt_tokens", "candidates")


def new_session_id() -> str:
    return uuid.uuid4().hex[:16]


@dataclass
class Turn:
    """One attempt. `messages` is the exact context sent for it; `feedback` is the text
    rendered from the public tests and `feedback_message` the user turn that carries it."""

    index: int
    messages: list[Message]
    reply: str
    program: str | None
    feedback: str
    feedback_message: str
    public_pass_rate: float = 0.0
    hidden_pass_rate: float = 0.0
    public: RunResult | None = None
    hidden: RunResult | None = None
    tokens: int = 0
    prompt_tokens: int = 0
    latency_s: float = 0.0
    author: str = "model"
    temperature: float | None = None
    top_p: float | None = None
    resamples: int = 0
    repeated: bool = False
    finish_reason: str | None = None
    created_at: float = 0.0
    # with several replies tried at once (`loop.candidates`): each one's score, in the order
    # they were sampled (the tests it passed; -1 without a program); empty for a one-reply turn
    candidates: list[int] = field(default_factory=list)

    @property
    def passed_public(self) -> bool:
        return self.program is not None and self.public_pass_rate >= 1.0

    @property
    def passed_hidden(self) -> bool:
        return self.program is not None and self.hidden_pass_rate >= 1.0

    @property
    def tampered(self) -> bool:
        """A hidden canary test passed on this turn's program: it forged its grading."""
        return any(r is not None and r.tampered for r in (self.public, self.hidden))

    @property
    def flags(self) -> list[str]:
        """Signals that the program reached for grading internals (sandbox/flags.py)."""
        found = {f for r in (self.public, self.hidden) if r is not None for f in r.flags}
        return sorted(found)

    @property
    def status(self) -> str:
        if self.program is None:
            return "no_code"
        return "passed" if self.passed_public else "failed"

    def meta(self) -> dict[str, Any]:
        """The fields kept in the store's meta_json column (TURN_META)."""
        return {name: getattr(self, name) for name in TURN_META}

    def summary(self) -> dict[str, Any]:
        """A compact JSON view (for `--json` output and event consumers)."""
        return {
            "index": self.index,
            "author": self.author,
            "status": self.status,
            "public_pass_rate": self.public_pass_rate,
            "hidden_pass_rate": self.hidden_pass_rate,
            "tokens": self.tokens,
            "latency_s": round(self.latency_s, 3),
            "resamples": self.resamples,
            "repeated": self.repeated,
            "tampered": self.tampered,
            "flags": self.flags,
        }


@dataclass
class SessionRecord:
    id: str
    problem_id: str
    problem_hash: str
    model: str
    source: str
    status: str
    started_at: float
    ended_at: float | None = None
    adapter_version: str | None = None
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    turns: list[Turn] = field(default_factory=list)
    turn_count: int = 0
    last_pass_rates: tuple[float, float] = (0.0, 0.0)
    """(public, hidden) pass rates of the last turn, also known when `turns` is not loaded."""
    problem: Problem | None = None

    def summary(self) -> dict[str, Any]:
        public, hidden = (
            (self.turns[-1].public_pass_rate, self.turns[-1].hidden_pass_rate) if self.turns else self.last_pass_rates
        )
        return {
            "id": self.id,
            "problem_id": self.problem_id,
            "model": self.model,
            "adapter_version": self.adapter_version,
            "source": self.source,
            "status": self.status,
            "error": self.error,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "turns": max(self.turn_count, len(self.turns)),
            "public_pass_rate": public,
            "hidden_pass_rate": hidden,
        }
