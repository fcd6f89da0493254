"""Pilot tests of the loop actions against the real sandbox and a scripted model: run the
loop, stop it, quit during a run, test your own edit, and a key press handled while the
model streams slowly."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from textual import events

from assistant.store.trajectory import INTERRUPTED, PASSED, UNSOLVED
from assistant.store.trajectory_db import Store
from assistant.tui.screens import ConfirmScreen, HelpScreen
from assistant.tui.widgets import ProgramEditor, ReplyView, ResultsTable, TurnTimeline
from tests.assistant.tui.tui_support import RIGHT_SUM, WRONG_SUM, ScriptedClient, answer, idle, wait_for

pytestmark = pytest.mark.docker


def _stored(app: Any) -> Any:
    store: Store = app.controller.services.store()
    (record,) = store.sessions(with_turns=True)
    return record


def test_run_shows_each_turn_and_stores_the_session(tui: Any) -> None:
    client = ScriptedClient([answer(WRONG_SUM), answer(RIGHT_SUM, "Fixed: add, not subtract.")])
    app = tui(client)

    async def scenario() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("ctrl+r")
            await idle(pilot, app)
            timeline = app.query_one(TurnTimeline)
            rows = [str(timeline.get_option_at_index(i).prompt) for i in range(timeline.option_count)]
            assert rows == ["✘  1 model pub 0/2 · hid 1/3", "✔  2 model pub 2/2 · hid 3/3"]
            table = app.query_one(ResultsTable)
            assert [str(c) for c in table.get_row_at(1)] == ["10 -4", "6", "6", "✔ passed"]
            assert app.query_one(ProgramEditor).text.strip() == RIGHT_SUM
            assert "Fixed: add, not subtract." in app.query_one(ReplyView).markdown.source
            assert app.controller.status.phase == PASSED and app.controller.status.turn == 2
            # Moving up the timeline shows the first turn's failing results.
            timeline.focus()
            await pilot.press("up")
            await pilot.pause()
            assert [str(c) for c in table.get_row_at(0)] == ["2 3", "5", "-1", "✘ failed"]
            assert "Here is my solution." in app.query_one(ReplyView).markdown.source
            # Enter loads that turn's program into the editor.
            await pilot.press("enter")
            assert app.query_one(ProgramEditor).text.strip() == WRONG_SUM

    asyncio.run(scenario())
    record = _stored(app)
    assert (record.status, record.source, len(record.turns)) == (PASSED, "tui", 2)
    assert ("information", "Solved") in [n[:2] for n in app.notices]


def held_in_turn_2(tui: Any, hold_at: int) -> tuple[Any, ScriptedClient]:
    """An app whose model fails turn 1, then holds its second reply at chunk `hold_at`."""
    client = ScriptedClient([answer(WRONG_SUM), answer(RIGHT_SUM) * 20], hold_at=hold_at, hold_request=2)
    return tui(client), client


@asynccontextmanager
async def turn_2_streaming(app: Any, client: ScriptedClient) -> AsyncIterator[Any]:
    """The app's pilot once the loop runs and the second reply has started streaming."""
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+r")
        await wait_for(pilot, client.held.is_set, what="the second reply to start streaming")
        yield pilot


def test_stop_keeps_finished_turns_and_marks_the_session_interrupted(tui: Any) -> None:
    app, client = held_in_turn_2(tui, hold_at=5)

    async def scenario() -> None:
        async with turn_2_streaming(app, client) as pilot:
            await pilot.press("ctrl+k")
            assert app.controller.status.phase == "stopping"
            client.release.set()
            await idle(pilot, app)
            assert app.controller.status.phase == INTERRUPTED
            assert app.query_one(TurnTimeline).option_count == 1  # the turn in flight is gone
            assert str(app.query_one(ReplyView).border_title) == "Reply · turn 2 · stopped"
            await pilot.press("ctrl+k")  # nothing runs now: says so, changes nothing

    asyncio.run(scenario())
    record = _stored(app)
    assert record.status == INTERRUPTED and len(record.turns) == 1
    assert ("warning", "Stopped") in [n[:2] for n in app.notices]
    assert any("Nothing is running" in n[2] for n in app.notices)


def test_quit_during_a_run_asks_then_stops_cleanly(tui: Any) -> None:
    app, client = held_in_turn_2(tui, hold_at=3)

    async def scenario() -> None:
        async with turn_2_streaming(app, client) as pilot:
            await pilot.press("ctrl+c")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
            await pilot.press("n")  # keep running
            assert app.controller.busy == "loop" and app.is_running
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
            await pilot.press("y")
            client.release.set()
            await wait_for(pilot, lambda: not app.is_running, what="the app to exit")

    asyncio.run(scenario())
    assert app.return_code == 0
    record = _stored(app)
    assert record.status == INTERRUPTED and len(record.turns) == 1


def test_quit_with_untested_edits_asks(tui: Any) -> None:
    app = tui(None)

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            app.query_one(ProgramEditor).focus()
            await pilot.press(*"print(1)")
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
            await pilot.press("n")
            assert app.is_running and app.query_one(ProgramEditor).text == "print(1)"
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
            await pilot.press("y")
            await wait_for(pilot, lambda: not app.is_running, what="the app to exit")

    asyncio.run(scenario())


def test_human_edit_is_tested_and_stored_as_a_human_turn(tui: Any) -> None:
    app = tui(None)  # no model needed, and none is asked for

    async def scenario() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            editor = app.query_one(ProgramEditor)
            editor.focus()
            editor.load_text("a, b = map(int, input().split())\n")
            editor.move_cursor(editor.document.end)
            await pilot.press(*"print(a * b)")
            assert editor.edited and "edited" in str(editor.border_title)
            await pilot.press("ctrl+t")
            await idle(pilot, app)
            timeline = app.query_one(TurnTimeline)
            assert str(timeline.get_option_at_index(0).prompt).startswith("✘  1 you")
            editor.load_text(RIGHT_SUM)
            await pilot.press("ctrl+t")
            await idle(pilot, app)
            assert str(timeline.get_option_at_index(1).prompt).startswith("✔  2 you")
            assert not editor.edited

    asyncio.run(scenario())
    record = _stored(app)
    assert [t.author for t in record.turns] == ["human", "human"]
    assert [t.public_pass_rate for t in record.turns] == [0.0, 1.0]
    assert record.status == PASSED and record.model == "human"


def test_a_key_is_handled_while_the_model_streams_slowly(tui: Any) -> None:
    slow = answer(RIGHT_SUM, "Let me think about this carefully. " * 30)  # ~400 chunks of 3 characters
    client = ScriptedClient([slow], delay=0.02)
    app = tui(client)

    async def scenario() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("ctrl+r")
            reply = app.query_one(ReplyView)
            await wait_for(pilot, lambda: len(reply.markdown.source) > 30, what="streaming to begin")
            started = time.monotonic()
            app.post_message(events.Key("f1", None))  # what the terminal driver does on a key press
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), timeout=5, what="the help screen")
            handled_in = time.monotonic() - started
            streamed = len(reply.markdown.source)
            assert app.controller.busy == "loop" and streamed < len(slow)  # still streaming
            # the stream lasts ~7 s; a UI blocked by it would answer only at its end
            assert handled_in < 3.5, f"the key took {handled_in:.2f} s while the model streamed"
            await wait_for(pilot, lambda: len(reply.markdown.source) > streamed, what="more tokens")
            await pilot.press("escape")
            await pilot.press("ctrl+k")
            await idle(pilot, app)

    asyncio.run(scenario())
    assert _stored_or_none(app) is None  # stopped in the first turn: nothing finished, nothing stored


def _stored_or_none(app: Any) -> Any:
    records = app.controller.services.store().sessions()
    return records[0] if records else None


def test_run_after_an_unsolved_session_continues_it(tui: Any) -> None:
    client = ScriptedClient([answer(WRONG_SUM), "no code, sorry", answer(RIGHT_SUM)])
    app = tui(client, turns=2)

    async def scenario() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("ctrl+r")
            await idle(pilot, app)
            assert app.controller.status.phase == UNSOLVED
            assert str(app.query_one(TurnTimeline).get_option_at_index(1).prompt) == "∅  2 model no code block"
            await pilot.press("ctrl+r")
            await idle(pilot, app)
            assert app.controller.status.phase == PASSED

    asyncio.run(scenario())
    record = _stored(app)
    assert len(record.turns) == 3 and record.status == PASSED
