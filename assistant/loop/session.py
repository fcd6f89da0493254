"""The multi-turn debugging loop (docs/architecture.md): prompt -> model reply -> program ->
sandbox -> feedback -> next turn, up to T turns, stopping once every public test passes.

Each turn's program runs once against the public and hidden tests together; only the
public results become feedback, hidden results are stored and never shown to the model.
A reply whose program repeats an earlier turn's (the same code, whatever its docstrings,
comments or formatting), or the problem's starter code as given, is resampled at a higher
temperature, up to `repeat_resamples` times, and the turn records it. The loop
knows no store: `assistant.loop.recorder` subscribes to its events and writes every finished
turn in its own transaction before the next begins. Model errors (after the client's retries)
and sandbox faults end the session with a status and a message; `run` never raises for them.

Subscribers receive events (TurnStarted, TokenStreamed, ProgramExtracted, TurnFinished,
SessionEnded) synchronously, from the thread that runs the loop, in the order they
subscribed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Protocol

from assistant.interfaces import ChatModel, Runner
from assistant.loop import candidates, feedback, prompts
from assistant.loop.public_hidden import run_public_and_hidden
from assistant.messages import extract
from assistant.messages.shapes import ChatResult, LLMError
from assistant.problems.schema import Problem
from assistant.settings import LoopSettings
from assistant.store.trajectory import (
    ERROR,
    INTERRUPTED,
    MODEL_ERROR,
    PASSED,
    RUNNING,
    SANDBOX_ERROR,
    UNSOLVED,
    Message,
    SessionRecord,
    Turn,
    new_session_id,
)
from sandbox.api import RunResult, SandboxError


@dataclass
class TurnStarted:
    session_id: str
    index: int
    attempt: int  # 0 for the first sample, k for the k-th resample of a repeated program
    temperature: float | None
    author: str = "model"


@dataclass
class TokenStreamed:
    session_id: str
    index: int
    text: str


@dataclass
class ProgramExtracted:
    session_id: str
    index: int
    program: str | None  # None: the reply held no code block
    repeated: bool


@dataclass
class TurnFinished:
    session_id: str
    turn: Turn


@dataclass
class SessionEnded:
    session_id: str
    status: str
    error: str | None


Event = TurnStarted | TokenStreamed | ProgramExtracted | TurnFinished | SessionEnded


class EventSink(Protocol):
    """A subscriber of a session's events (the CLI printer, the TUI, the collection meter,
    the store's recorder), called synchronously from the thread that runs the loop."""

    def __call__(self, event: Event) -> None: ...


class Session:
    """One problem worked on by one model. Create it (or `Session.resume` a record), then
    `run()`. To store it, subscribe `assistant.loop.recorder.Recorder` (or use `recorder.record`)."""

    def __init__(
        self,
        problem: Problem,
        client: ChatModel,
        sandbox: Runner,
        settings: LoopSettings | None = None,
        *,
        source: str = "cli",
        adapter_version: str | None = None,
        subscriber: EventSink | None = None,
        stream: bool = True,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.problem = problem
        self.client = client
        self.sandbox = sandbox
        if settings is None:
            settings = LoopSettings()
        self.settings = settings
        self.prompts = prompts.style_for(settings, getattr(client, "base_model", None))
        self.source = source
        self.adapter_version = adapter_version or getattr(client, "adapter_version", None)
        self.subscribers: list[EventSink] = [subscriber] if subscriber else []
        self._cache: tuple[Any, dict[Any, Any]] = (None, {})  # (the turns it is for, the values)
        self.stream = stream
        self.meta = dict(meta or {})
        """Stored with the session (the recorder writes it): what a rerun must match to reuse it."""
        self.id: str | None = None
        self.turns: list[Turn] = []
        self.status = RUNNING
        self.error: str | None = None
        self._interrupted = False

    @classmethod
    def resume(
        cls,
        record: SessionRecord,
        client: ChatModel,
        sandbox: Runner,
        settings: LoopSettings | None = None,
        **kwargs: Any,
    ) -> "Session":
        """Continue a stored session (any status) from its last turn; `record.problem` must be set."""
        assert record.problem is not None
        session = cls(
            record.problem,
            client,
            sandbox,
            settings,
            source=record.source,
            adapter_version=record.adapter_version,
            **kwargs,
        )
        session.id, session.turns = record.id, list(record.turns)
        return session

    # --- events -------------------------------------------------------------------------

    def subscribe(self, subscriber: EventSink, first: bool = False) -> None:
        """Add a subscriber, after the others (or before them with `first`)."""
        self.subscribers.insert(0 if first else len(self.subscribers), subscriber)

    def _emit(self, event: Event) -> None:
        for subscriber in self.subscribers:
            subscriber(event)

    # --- the loop -----------------------------------------------------------------------

    @property
    def passed(self) -> bool:
        return bool(self.turns) and self.turns[-1].passed_public

    def context(self) -> list[Message]:
        """The messages for the next turn (`PromptStyle.continued` of the loop's style)."""
        return self.prompts.continued(self.problem, self.turns)

    def _start(self) -> str:
        if self.id is None:
            self.id = new_session_id()
        return self.id

    def run(self, max_turns: int | None = None, stop_on_pass: bool = True) -> str:
        """Model turns until the public tests pass or the session holds `max_turns` turns
        (default: the configured T); with `stop_on_pass=False` it always takes them all
        (the paper's full horizon: "public passed, hidden failed" turns for training).
        Returns the final status."""
        limit = self.settings.turns if max_turns is None else max_turns
        self._start()
        try:
            while (not self.passed or not stop_on_pass) and len(self.turns) < limit and self.may_take_turn():
                if self._interrupted:
                    return self.finish(INTERRUPTED, "interrupted by the user")
                self.model_turn()
        except LLMError as exc:
            return self.finish(MODEL_ERROR, str(exc))
        except SandboxError as exc:
            return self.finish(SANDBOX_ERROR, str(exc))
        except KeyboardInterrupt:
            self.finish(INTERRUPTED, "interrupted by the user")
            raise
        except Exception as exc:  # a bug: keep the finished turns, say what happened, re-raise
            self.finish(ERROR, f"{type(exc).__name__}: {exc}")
            raise
        return self.finish(PASSED if self.passed else UNSOLVED)

    def interrupt(self) -> None:
        """Ask `run`, from another thread, to end after the turn it is taking (as `interrupted`)."""
        self._interrupted = True

    def may_take_turn(self) -> bool:
        """Whether `run` may start another turn within its turn limit (a subclass's time budget)."""
        return True

    def finish(self, status: str, error: str | None = None) -> str:
        self.status, self.error = status, error
        self._emit(SessionEnded(self._start(), status, error))
        return status

    def _sample(self, index: int, messages: list[Message], attempt: int, temperature: float) -> ChatResult:
        sid = self._start()
        self._emit(TurnStarted(sid, index, attempt, temperature))
        on_token = (lambda text: self._emit(TokenStreamed(sid, index, text))) if self.stream else None
        return self.client.chat(
            messages,
            temperature=temperature,
            top_p=self.settings.top_p,
            max_tokens=self.reply_tokens(),
            on_token=on_token,
        )

    def reply_tokens(self) -> int | None:
        """The most tokens the next reply may have (`loop.max_tokens`)."""
        return self.settings.max_tokens

    def model_turn(self) -> Turn:
        """One model turn (with repeat resampling; with `loop.candidates` > 1, several replies
        side by side and the one passing the most public tests kept). Raises LLMError /
        SandboxError."""
        if self.settings.candidates > 1:
            return self.candidate_turn(self.settings.candidates, self.settings.candidate_temperature)
        index, messages = len(self.turns), self.context()
        temperature = self.settings.temperature_for(index)
        earlier = self._earlier_programs()
        reply = self._sample(index, messages, 0, temperature)
        resamples = 0
        while self._repeats(self._program(reply.text)[0], earlier) and resamples < self.settings.repeat_resamples:
            resamples += 1
            temperature = self.settings.repeat_temperature
            reply = self._sample(index, messages, resamples, temperature)
        turn = self._execute(index, messages, reply.text, author="model")
        self._stamp(turn, reply, temperature)
        turn.resamples = resamples
        return self._record(turn)

    def candidate_turn(self, count: int, candidate_temperature: float) -> Turn:
        """One turn of `count` replies sampled at once (`assistant.loop.candidates`), each run in
        the sandbox; the turn is the one with the best `score` (on ties a new program, then the
        first), and records every candidate's score (`Turn.candidates`, also in the session's
        in-memory meta["candidates"] with the chosen index)."""
        index, messages = len(self.turns), self.context()
        temperature = self.settings.temperature_for(index)
        found = candidates.sample(
            self.client,
            messages,
            lambda: self._sample(index, messages, 0, temperature),
            temperature,
            self.settings,
            count,
            candidate_temperature,
            self.reply_tokens(),
        )
        tried = [self._execute(index, messages, reply.text, author="model", emit=False) for reply in found.replies]
        found.scores = [self.score(turn) for turn in tried]
        found.fresh = [not turn.repeated for turn in tried]
        best = found.chosen()
        turn = tried[best]
        self._stamp(turn, found.replies[best], found.temperatures[best])
        turn.candidates = list(found.scores)
        self._emit(ProgramExtracted(self._start(), index, turn.program, turn.repeated))
        self.meta.setdefault("candidates", []).append(found.summary(index))
        return self._record(turn)

    def score(self, turn: Turn) -> int:
        """How a candidate ranks: the public tests it passes (hidden ones never count), -1
        without a program."""
        return candidates.passed_count(turn.public) if turn.program is not None and turn.public else -1

    def _stamp(self, turn: Turn, reply: ChatResult, temperature: float) -> None:
        """The sampling facts of a model turn: tokens, latency, temperature, finish reason."""
        turn.tokens, turn.prompt_tokens, turn.latency_s = reply.completion_tokens, reply.prompt_tokens, reply.latency_s
        turn.temperature, turn.top_p, turn.finish_reason = temperature, self.settings.top_p, reply.finish_reason

    def human_turn(self, text: str) -> Turn:
        """A turn written by a person: a reply with a ```python block, or a bare program."""
        sid = self._start()
        index, messages = len(self.turns), self.context()
        self._emit(TurnStarted(sid, index, 0, None, author="human"))
        reply = text if extract.code(text) is not None else extract.fence(text)
        try:
            turn = self._execute(index, messages, reply, author="human")
        except SandboxError as exc:
            self.finish(SANDBOX_ERROR, str(exc))
            raise
        return self._record(turn)

    def seed(self, turn: Turn) -> Turn:
        """Start from a copy of another session's first turn on the same problem (collect: the
        greedy first turn that several samples share), recorded as this session's turn 0."""
        if self.turns:
            raise ValueError("only an empty session can be seeded with a first turn")
        self._start()
        return self._record(replace(turn, index=0, created_at=time.time()))

    def _turn_cache(self) -> dict[Any, Any]:
        """What is computed once per turn (the earlier programs' keys, each reply's program): kept
        until a turn is added or the turns are replaced (resume)."""
        mark = (len(self.turns), id(self.turns[-1]) if self.turns else None)
        if self._cache[0] != mark:
            self._cache = (mark, {"programs": {}})
        return self._cache[1]

    def _earlier_programs(self) -> set[str]:
        """The code keys (`extract.code_key`) a new reply must not repeat: earlier turns' and the starter
        code as given (a copy of the given stub or file is no answer); computed once per turn."""
        cache = self._turn_cache()
        if "earlier" not in cache:
            given = [self.problem.starter_code] if self.problem.starter_code.strip() else []
            cache["earlier"] = {extract.code_key(p) for p in [t.program for t in self.turns if t.program] + given}
        return cache["earlier"]

    def _program(self, reply: str) -> tuple[str | None, str]:
        """`program_of(reply)`, computed once per reply in a turn (a resample check and the turn
        itself read the same program; a debug edit is applied once)."""
        programs = self._turn_cache()["programs"]
        if reply not in programs:
            programs[reply] = self.program_of(reply)
        return programs[reply]

    @staticmethod
    def _repeats(program: str | None, earlier: set[str]) -> bool:
        return program is not None and extract.code_key(program) in earlier

    def program_of(self, reply: str) -> tuple[str | None, str]:
        """The program a reply gives, or None and the feedback that says why there is none."""
        return extract.code(reply), feedback.NO_CODE

    def feedback_for(self, public: RunResult) -> str:
        """The feedback text of a run of the public tests."""
        loop = self.settings
        return feedback.render(public, field_chars=loop.feedback_field_chars, timeout_s=loop.timeout_s)

    def _execute(self, index: int, messages: list[Message], reply: str, author: str, emit: bool = True) -> Turn:
        sid = self._start()
        program, text = self._program(reply)
        repeated = self._repeats(program, self._earlier_programs())
        if emit:
            self._emit(ProgramExtracted(sid, index, program, repeated))
        public = hidden = None
        if program is not None:
            public, hidden = run_public_and_hidden(self.sandbox, self.problem, program, self.settings.sanitize_answers)
            text = self.feedback_for(public)
        return Turn(
            index=index,
            messages=messages,
            reply=reply,
            program=program,
            feedback=text,
            feedback_message=self.prompts.feedback_content(text),
            public_pass_rate=public.pass_rate if public else 0.0,
            hidden_pass_rate=hidden.pass_rate if hidden else 0.0,
            public=public,
            hidden=hidden,
            author=author,
            created_at=time.time(),
            repeated=repeated and author == "model",  # a person or the search may resubmit
        )

    def _record(self, turn: Turn) -> Turn:
        self.turns.append(turn)
        self._emit(TurnFinished(self._start(), turn))
        return turn
