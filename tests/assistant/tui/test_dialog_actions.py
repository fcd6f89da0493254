"""Pilot tests of the dialog actions: help, open a problem (example or path), write a new
problem, diff two turns, accept and save the solution, browse and resume a stored
session, and the errors that must become notifications (no Docker, no server, bad file)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, OptionList, Select, Static, TextArea

from assistant.loop import prompts, recorder
from assistant.loop.session import Session
from assistant.problems.resolve import load_problem
from assistant.serving.server import ServerError
from assistant.settings import LoopSettings, Settings
from assistant.store.trajectory import INTERRUPTED, PASSED
from assistant.store.trajectory_db import Store
from assistant.tui.screens import (
    ConfirmScreen,
    DiffScreen,
    HelpScreen,
    NewProblemScreen,
    OpenProblemScreen,
    SaveSolutionScreen,
    SessionsScreen,
)
from assistant.tui.widgets import ProblemView, ProgramEditor, TestsView, TurnTimeline
from sandbox.api import SandboxError
from tests.assistant.tui.tui_support import (
    DATA,
    RIGHT_SUM,
    SUM,
    WRONG_SUM,
    ScriptedClient,
    answer,
    idle,
    make_app,
    wait_for,
)

pytestmark = pytest.mark.docker


async def _open(pilot: Any, app: Any, key: str, kind: type) -> Any:
    """Press `key` and wait for the `kind` screen it opens."""
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, kind), what=kind.__name__)
    return app.screen


def _errors(app: Any) -> list[tuple[str, str]]:
    return [(title, message) for severity, title, message in app.notices if severity == "error"]


def test_help_lists_every_binding(tui: Any) -> None:
    app = tui(None, problem=None)

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await _open(pilot, app, "f1", HelpScreen)
            table = screen.query_one(DataTable)
            rows = {str(table.get_row_at(i)[0]): str(table.get_row_at(i)[1]) for i in range(table.row_count)}
            for key in ("f1", "ctrl+o", "ctrl+n", "ctrl+r", "ctrl+k", "ctrl+t", "ctrl+d", "ctrl+s", "ctrl+b", "ctrl+q"):
                assert key in rows, key
            await pilot.press("escape")
            assert not isinstance(app.screen, HelpScreen)

    asyncio.run(scenario())


def test_open_an_example_then_a_bad_file(tui: Any, tmp_path: Path) -> None:
    app = tui(None, problem=None)

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await _open(pilot, app, "ctrl+o", OpenProblemScreen)
            examples = screen.query_one(OptionList)
            assert examples.option_count >= 3
            first = screen.examples[0]
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.controller.problem is not None, what="the example to open")
            assert app.controller.problem.id == first.id
            assert app.query_one(ProblemView).border_title == f"Problem · {first.id}"
            assert "public" in str(app.query_one(TestsView).border_title)
            # A broken file: a notification that says what to do, and the app goes on.
            screen = await _open(pilot, app, "ctrl+o", OpenProblemScreen)
            screen.query_one(Input).value = str(DATA / "broken.yaml")
            screen.query_one(Input).focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda: bool(_errors(app)), what="an error notification")
            assert app.controller.problem.id == first.id and app.is_running

    asyncio.run(scenario())
    ((title, message),) = _errors(app)
    assert title == "Bad problem file" and "no tests" in message and "ctrl+o" in message


def test_write_a_new_problem_and_save_it(tui: Any, tmp_path: Path) -> None:
    app = tui(None, problem=None, cwd=tmp_path)

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            form = await _open(pilot, app, "ctrl+n", NewProblemScreen)
            form.query_one("#new-id", Input).value = "double"
            form.query_one("#new-title", Input).value = "Double it"
            form.query_one("#new-public", TextArea).load_text("2\n---\n4\n===\n-3\n---\n-6")
            await pilot.press("ctrl+s")
            assert isinstance(app.screen, NewProblemScreen)  # a mistake keeps the form open
            assert "statement" in str(form.query_one("#new-error", Static).render())
            form.query_one("#new-statement", TextArea).load_text("Read an integer and print twice its value.")
            form.query_one("#new-kind", Select).value = "function"
            await pilot.pause()
            await pilot.press("ctrl+s")
            assert "entry_point" in str(form.query_one("#new-error", Static).render())
            form.query_one("#new-kind", Select).value = "stdio"
            await pilot.pause()
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: app.controller.problem is not None, what="the new problem to open")

    asyncio.run(scenario())
    saved = tmp_path / "problems" / "double.yaml"
    problem = load_problem(str(saved))
    assert (problem.id, problem.title, len(problem.public_tests)) == ("double", "Double it", 2)
    assert problem.public_tests[1].input == "-3\n" and problem.public_tests[1].output == "-6\n"
    assert app.controller.problem.id == "double"


def test_diff_two_turns_and_save_the_solution(tui: Any, tmp_path: Path) -> None:
    client = ScriptedClient([answer(WRONG_SUM), answer(RIGHT_SUM)])
    app = tui(client, cwd=tmp_path)

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("ctrl+r")
            await idle(pilot, app)
            diff = await _open(pilot, app, "ctrl+d", DiffScreen)
            text = diff.diff_text()
            assert "--- turn 1 (model)" in text and "+++ turn 2 (model)" in text
            assert "-print(a - b)" in text and "+print(a + b)" in text
            diff.query_one("#diff-after", Select).value = 0  # turn 1 against itself
            await pilot.pause()
            assert "same program" in diff.diff_text()
            await pilot.press("escape")
            save = await _open(pilot, app, "ctrl+s", SaveSolutionScreen)
            assert "passes every public test" in str(save.query_one("#save-note", Static).render())
            field = save.query_one(Input)
            assert field.value == str(tmp_path / "solution_sum-two.py")
            field.value = str(tmp_path / "out" / "sum.py")
            await pilot.press("enter")
            await wait_for(pilot, lambda: (tmp_path / "out" / "sum.py").exists(), what="the file")
            mine = tmp_path / "mine.py"  # a file of the user's: replaced only once they say so
            mine.write_text("precious = 1\n")
            for answer_key, expected in (("n", "precious = 1\n"), ("y", RIGHT_SUM + "\n")):
                save = await _open(pilot, app, "ctrl+s", SaveSolutionScreen)
                save.query_one(Input).value = str(mine)
                await pilot.press("enter")
                await pilot.pause()
                assert "exists. Replace it" in str(app.screen.query_one("#confirm-question").render())
                await pilot.press(answer_key)
                await pilot.pause()
                assert mine.read_text() == expected

    asyncio.run(scenario())
    assert (tmp_path / "out" / "sum.py").read_text() == RIGHT_SUM + "\n"
    assert ("information", "Solution saved") in [n[:2] for n in app.notices]


def _interrupted_session(home: Path, sandbox: Any) -> str:
    """A stored session with one failed turn that was interrupted, as `cobalt solve` leaves it."""
    with Store(home / "trajectories.db") as store:
        session = recorder.record(
            Session(
                load_problem(SUM), ScriptedClient([answer(WRONG_SUM)]), sandbox, LoopSettings(turns=3), source="cli"
            ),
            store,
        )
        session.run(max_turns=1)
        session.finish(INTERRUPTED, "interrupted by the user")
        assert session.id is not None
        return session.id


def test_browse_sessions_and_resume_one(cobalt_home: Path, sandbox: Any) -> None:
    session_id = _interrupted_session(cobalt_home, sandbox)
    client = ScriptedClient([answer(RIGHT_SUM, "Now adding.")])
    app, store = make_app(cobalt_home, sandbox, client, problem=None)

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            browser = await _open(pilot, app, "ctrl+b", SessionsScreen)
            table = browser.query_one(DataTable)
            assert table.row_count == 1 and str(table.get_row_at(0)[4]) == INTERRUPTED
            await pilot.press("enter")  # open: shows the stored turn, runs nothing
            await wait_for(pilot, lambda: app.controller.resume_id == session_id, what="the session to open")
            await pilot.pause()
            assert app.query_one(TurnTimeline).option_count == 1
            assert app.query_one(ProgramEditor).text.strip() == WRONG_SUM and client.requests == 0
            await _open(pilot, app, "ctrl+b", SessionsScreen)
            await pilot.press("r")  # resume: continue the loop from the last turn
            await wait_for(pilot, lambda: client.requests == 1, what="the resumed run")
            await idle(pilot, app)
            assert app.query_one(TurnTimeline).option_count == 2

    try:
        asyncio.run(scenario())
        record = store.session(session_id)
    finally:
        store.close()
    assert record.status == PASSED and [t.author for t in record.turns] == ["model", "model"]
    assert prompts.feedback_of(record.turns[1].messages[-1]["content"]).endswith(
        "Expected Output:\n5"
    )  # feedback of turn 1


def test_no_docker_and_no_server_are_notifications(cobalt_home: Path) -> None:
    def no_docker() -> Any:
        raise SandboxError("cannot reach the Docker engine at unix:///var/run/docker.sock (refused): start dockerd")

    def no_server(_: Any) -> Any:
        raise ServerError("the vLLM server exited during start-up (code 1): out of memory")

    from assistant.tui import CobaltApp, Openers, Services

    store = Store(cobalt_home / "trajectories.db")
    openers = Openers(client=no_server, sandbox=no_docker, store=store)
    services = Services(Settings(model={"name": "qwen-coder"}), openers=openers)
    app = CobaltApp(services, LoopSettings(turns=2), problem=SUM, cwd=cobalt_home)

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: len(_errors(app)) >= 2, what="start-up errors")
            assert app.controller.status.server == "error"
            await pilot.press("ctrl+r")
            await idle(pilot, app)
            assert app.is_running and app.controller.status.phase == "idle"

    try:
        asyncio.run(scenario())
    finally:
        store.close()
    titles = [title for title, _ in _errors(app)]
    assert {"Sandbox unavailable", "Model server unavailable"} <= set(titles)
    assert any("cobalt serve" in message for _, message in _errors(app))
    with Store(store.path) as reopened:
        assert not reopened.sessions()  # nothing ran, nothing stored


def test_a_bad_problem_argument_opens_the_app_with_a_notification(tui: Any) -> None:
    app = tui(None, problem=str(DATA / "missing.yaml"))

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: bool(_errors(app)), what="the error")
            assert app.controller.problem is None and app.is_running
            await pilot.press("ctrl+r")  # nothing open: says what to do
            await pilot.press("ctrl+t")

    asyncio.run(scenario())
    assert _errors(app)[0][0] == "Bad problem file"
    warnings = [m for s, _, m in app.notices if s == "warning"]
    assert any("Open a problem first" in m for m in warnings)


def test_opening_another_problem_asks_before_losing_untested_edits(tui: Any) -> None:
    app = tui(None)

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            app.query_one(ProgramEditor).focus()
            await pilot.press(*"print(1)")
            await _open(pilot, app, "ctrl+o", ConfirmScreen)
            await pilot.press("n")  # keep editing: no dialog, the edits stay
            await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen), what="the question to close")
            assert not isinstance(app.screen, OpenProblemScreen) and app.query_one(ProgramEditor).text == "print(1)"
            await _open(pilot, app, "ctrl+o", ConfirmScreen)
            await pilot.press("y")
            await wait_for(pilot, lambda: isinstance(app.screen, OpenProblemScreen), what="the open dialog")

    asyncio.run(scenario())
