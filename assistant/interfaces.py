"""The interfaces the loop, collection, evaluation and the trainer depend on, in one place:

- `ChatModel`: a model that answers a message list (`assistant.serving.chat.ChatClient`, test fakes);
- `Runner`: runs one program against tests (`sandbox.Sandbox`);
- `BatchRunner`: runs many programs at once (`sandbox.Sandbox.run_many`), for the reward,
  perturbed contexts and rollouts;
- `Rule`: the numbers of a deterministic problem split (`assistant.settings.SplitSection`);
- `EventSink`: a subscriber of a session's events (`assistant.loop.session.Event`): the CLI
  printer, the TUI, the collection meter, the store's recorder.

Protocols only: nothing here runs, stores or builds anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from assistant.serving.chat import ChatResult
from assistant.store.trajectory import Message
from sandbox.api import Job, RunResult, TestCase

if TYPE_CHECKING:
    from assistant.loop.session import Event


class ChatModel(Protocol):
    display_name: str

    def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = ...,
        top_p: float = ...,
        max_tokens: int | None = ...,
        on_token: Callable[[str], None] | None = ...,
    ) -> ChatResult: ...


class Runner(Protocol):
    def run(
        self, program: str, tests: list[TestCase], kind: str, limits: Any = None, project: Any = None
    ) -> RunResult: ...


class BatchRunner(Protocol):
    def run_many(self, jobs: list[Job]) -> list[RunResult]: ...


class Rule(Protocol):
    split_seed: int
    test_share: float
    val_share_of_train: float


class EventSink(Protocol):
    """Called synchronously, from the thread that runs the loop, with every event."""

    def __call__(self, event: Event) -> None: ...
