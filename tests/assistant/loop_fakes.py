"""Test doubles for the loop tests: a ChatClient whose replies are scripted through
litellm's `mock_response` (the real client code path runs), small problems, a turn's grading
fields as the loop fills them, and a wait for a subprocess's stored turns."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from assistant.loop import prompts
from assistant.serving.chat import ChatClient
from assistant.store.trajectory_db import Store
from sandbox.api import RunResult
from tests.assistant.sample_problems import add_problem, sum_problem  # noqa: F401  (re-exported)


class ScriptedClient(ChatClient):
    """Pops one scripted reply per request; an Exception reply makes litellm raise it."""

    def __init__(self, replies: list[Any], name: str = "scripted", retries: int = 0) -> None:
        super().__init__("openai/scripted-model", display_name=name, retries=retries, timeout_s=30)
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        self.calls.append({"messages": [dict(m) for m in messages], "logit_bias": self.logit_bias})
        if not self.replies:
            raise AssertionError("the model was asked for more replies than were scripted")
        return {"mock_response": self.replies.pop(0)}


class ByTemperature(ScriptedClient):
    """Pops replies by the request's temperature (candidates are requested at once, in any order)."""

    def __init__(self, replies: dict[float, list[str]]) -> None:
        super().__init__([])
        self.queues = {t: list(r) for t, r in replies.items()}
        self.temperatures: list[float] = []
        self._local = threading.local()
        self._lock = threading.Lock()

    def chat(self, messages: Any, *, temperature: float = 0.0, **kwargs: Any) -> Any:
        with self._lock:
            self.temperatures.append(temperature)
            self._local.reply = self.queues[temperature].pop(0)
        return super().chat(messages, temperature=temperature, **kwargs)

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        with self._lock:
            self.calls.append({"messages": [dict(m) for m in messages], "logit_bias": self.logit_bias})
        return {"mock_response": self._local.reply}


def answer(program: str, words: str = "Here is my solution.") -> str:
    return f"{words}\n\n```python\n{program.strip()}\n```"  # as the fence stop leaves it


WRONG_SUM = "a, b = map(int, input().split())\nprint(a - b)"
RIGHT_SUM = "a, b = map(int, input().split())\nprint(a + b)"


def graded(feedback: str, result: RunResult | None, public_rate: float, hidden_rate: float) -> dict[str, Any]:
    """A turn's grading fields as the loop fills them: `feedback` and its message in the
    configured wording, the pass rates, and `result` as both the public and hidden results."""
    return {
        "feedback": feedback,
        "feedback_message": prompts.style().feedback_content(feedback),
        "public_pass_rate": public_rate,
        "hidden_pass_rate": hidden_rate,
        "public": result,
        "hidden": result,
    }


def wait_for_stored_turns(proc: subprocess.Popen, db: Path, turns: int, timeout_s: float = 180) -> None:
    """Wait (at most `timeout_s`) until `proc` has stored `turns` turns in the store at `db`,
    or has ended."""
    deadline = time.time() + timeout_s
    while time.time() < deadline and proc.poll() is None:
        if db.exists() and Store(db).counts()[1] >= turns:
            return
        time.sleep(0.2)
