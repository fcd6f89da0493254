"""Test doubles for the loop tests: a ChatClient whose replies are scripted through
litellm's `mock_response` (the real client code path runs), and small problems."""

from __future__ import annotations

from typing import Any

from assistant.serving.chat import ChatClient
from tests.assistant.sample_problems import add_problem, sum_problem  # noqa: F401  (re-exported)


class ScriptedClient(ChatClient):
    """Pops one scripted reply per request; an Exception reply makes litellm raise it."""

    def __init__(self, replies: list[Any], name: str = "scripted", retries: int = 0) -> None:
        super().__init__("openai/scripted-model", display_name=name, retries=retries, timeout_s=30)
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        self.calls.append({"messages": [dict(m) for m in messages]})
        if not self.replies:
            raise AssertionError("the model was asked for more replies than were scripted")
        return {"mock_response": self.replies.pop(0)}


def answer(program: str, words: str = "Here is my solution.") -> str:
    return f"{words}\n\n```python\n{program.strip()}\n```"  # as the fence stop leaves it


WRONG_SUM = "a, b = map(int, input().split())\nprint(a - b)"
RIGHT_SUM = "a, b = map(int, input().split())\nprint(a + b)"
