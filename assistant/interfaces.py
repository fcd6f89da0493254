"""The interfaces the loop, collection, evaluation and the trainer depend on, in one place:

- `ChatModel`: a model that answers a message list (`assistant.serving.chat.ChatClient`, test fakes);
- `Runner`: runs one program against tests (`sandbox.Sandbox`);
- `BatchRunner`: runs many programs at once (`sandbox.Sandbox.run_many`), for the reward,
  perturbed contexts and rollouts;
- `Rule`: the numbers of a deterministic problem split (`assistant.settings.SplitSection`).

Protocols only: nothing here runs, stores or builds anything, and nothing here imports more
than the shapes they pass (`assistant.messages.shapes`, `sandbox.api`). A session's subscriber
(`EventSink`) lives beside its events in `assistant.loop.session`.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from assistant.messages.shapes import ChatResult, Message
from sandbox.api import Job, RunResult, TestCase


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
