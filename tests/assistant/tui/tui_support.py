"""Test doubles for the TUI tests: a ChatClient scripted through litellm's mock_response
(the real client code path runs), optionally slowed down or held at a chosen chunk, and
helpers to build the app on a temporary store and wait for it to settle."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any, Callable

from assistant.serving.chat import ChatClient
from assistant.settings import LoopSettings, Settings
from assistant.store.trajectory_db import Store
from assistant.tui import CobaltApp, Openers, Services

DATA = Path(__file__).parent / "data"
SUM = str(DATA / "sum-two.yaml")  # the tests' own copy, so example edits cannot move snapshots
WRONG_SUM = "a, b = map(int, input().split())\nprint(a - b)"
RIGHT_SUM = "a, b = map(int, input().split())\nprint(a + b)"


def answer(program: str, words: str = "Here is my solution.") -> str:
    return f"{words}\n\n```python\n{program.strip()}\n```\n"


class ScriptedClient(ChatClient):
    """Pops one scripted reply per request. `delay` sleeps before each streamed chunk;
    `hold_at` blocks request number `hold_request` (1-based) before its chunk number
    `hold_at` until `release` is set (`held` says it got there)."""

    def __init__(
        self, replies: list[str], delay: float = 0.0, hold_at: int | None = None, hold_request: int = 1
    ) -> None:
        super().__init__("openai/scripted-model", display_name="scripted", retries=0, timeout_s=30)
        self.replies = list(replies)
        self.delay, self.hold_at, self.hold_request = delay, hold_at, hold_request
        self.held, self.release = threading.Event(), threading.Event()
        self.requests = 0

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        self.requests += 1
        if not self.replies:
            raise AssertionError("the model was asked for more replies than were scripted")
        return {"mock_response": self.replies.pop(0)}

    def chat(self, messages: Any, *, on_token: Callable[[str], None] | None = None, **kwargs: Any) -> Any:
        if on_token is None or (not self.delay and self.hold_at is None):
            return super().chat(messages, on_token=on_token, **kwargs)
        seen, request = [0], self.requests + 1

        def slow(text: str) -> None:
            seen[0] += 1
            if (
                self.hold_at is not None
                and request == self.hold_request
                and seen[0] == self.hold_at
                and not self.release.is_set()
            ):
                self.held.set()
                self.release.wait(30)
            if self.delay:
                time.sleep(self.delay)
            on_token(text)

        return super().chat(messages, on_token=slow, **kwargs)


def make_app(
    home: Path,
    sandbox: Any,
    client: ChatClient | None,
    problem: str | None = None,
    turns: int = 3,
    cwd: Path | None = None,
) -> tuple[CobaltApp, Store]:
    store = Store(home / "trajectories.db")

    def no_client(_: Any) -> Any:
        raise AssertionError("this test has no model")

    openers = Openers(client=(lambda _: client) if client else no_client, sandbox=lambda: sandbox, store=store)
    services = Services(Settings(model={"name": "scripted"}), openers=openers)
    app = CobaltApp(services, LoopSettings(turns=turns), problem=problem, cwd=cwd or home, prewarm=client is not None)
    return app, store


async def wait_for(pilot: Any, predicate: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    """Let the app run until `predicate()` holds (fails the test after `timeout` s)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await asyncio.sleep(0.01)  # not pilot.pause: that waits for an idle loop, rare while streaming


async def idle(pilot: Any, app: CobaltApp, timeout: float = 30.0) -> None:
    """Wait until no run is in flight and the app has painted."""
    await wait_for(pilot, lambda: app.controller.busy is None, timeout, "the run to end")
    await pilot.pause()
    await asyncio.sleep(0)
