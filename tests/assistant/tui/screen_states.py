"""The main screen states that the snapshot and layout tests look at, each reached the
way a person reaches it: empty (nothing open), running (turn 2 streaming after a failed
turn 1), solved (wrong, then right), failed (two wrong turns, no turns left)."""

from __future__ import annotations

from typing import Any

from tests.assistant.tui.tui_support import RIGHT_SUM, WRONG_SUM, ScriptedClient, answer, idle, wait_for

HOLD_AT = 26  # the running state shows the first 25 chunks of turn 2's reply
STATES = ("empty", "running", "solved", "failed")


def client_for(state: str) -> ScriptedClient | None:
    if state == "empty":
        return None
    if state == "running":
        return ScriptedClient(
            [answer(WRONG_SUM), answer(RIGHT_SUM, "The first program subtracted; it must add.")],
            hold_at=HOLD_AT,
            hold_request=2,
        )
    if state == "solved":
        return ScriptedClient([answer(WRONG_SUM), answer(RIGHT_SUM, "Fixed: add instead of subtract.")])
    return ScriptedClient([answer(WRONG_SUM), answer("a, b = input().split()\nprint(a + b)", "Now adding.")])


async def reach(state: str, pilot: Any, app: Any) -> None:
    """Drive the app into `state` and let it settle."""
    if state != "empty":
        await pilot.press("ctrl+r")
    if state == "running":
        client = app.controller.services.client_if_ready()
        await wait_for(pilot, lambda: client is not None and client.held.is_set(), what="turn 2 to stream")
        await wait_for(pilot, lambda: len(app.controller.reply) == 3 * (HOLD_AT - 1), what="the held stream")
        await pilot.pause(0.3)
    elif state != "empty":
        await idle(pilot, app)
    status = app.controller.status  # timing-free pixels: the live figures are pinned
    status.tokens, status.elapsed_s, status.tokens_per_s = (25, 2.0, 12.5) if state != "empty" else (None, None, None)
    app.paint_status()
    await settle(pilot, app, reply=state != "empty")


async def settle(pilot: Any, app: Any, reply: bool) -> None:
    """Wait until the Markdown panes have rendered and nothing is animating."""
    await wait_for(pilot, lambda: bool(app.query_one("#statement").children), what="the statement")
    if reply:
        await wait_for(pilot, lambda: bool(app.query_one("#reply-text").children), what="the reply")
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    await pilot.pause()


async def release(app: Any) -> None:
    """Let a held client finish (so the app can close)."""
    client = app.controller.services.client_if_ready()
    if client is not None:
        client.release.set()
