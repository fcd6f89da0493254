"""Pilot tests of a debugging session in the TUI, on a real project in the real sandbox with a
scripted model: the failing test and the implicated code before the first turn, the previous turn's
results kept while the next one streams, f2 writing the passing fix, f3 undoing it (ctrl+z stays the editor's undo), and
`FILE --test CMD` from the open dialog."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from assistant.store.trajectory import PASSED
from assistant.tui.keys import APPLY_FIX_KEY, UNDO_FIX_KEY
from assistant.tui.widgets import ProblemView, ProgramEditor, ResultsTable, TurnTimeline
from tests.assistant.debug.projects import MUL_FIXED, MUL_WRONG, calc_project, commit_all
from tests.assistant.tui.tui_support import ScriptedClient, answer, idle, make_app, wait_for

pytestmark = pytest.mark.docker
BROKEN = "import math\n\n\ndef mul(a, b):\n    return a + b\n\n\ndef area(r):\n    return math.pi * r * r\n"
WRONG, FIXED = MUL_WRONG, MUL_FIXED
KEY_NAMES = {" ": "space", '"': "quotation_mark", "'": "apostrophe"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return calc_project(tmp_path / "calc-project", BROKEN)


@pytest.fixture
def debug_app(cobalt_home: Path, sandbox: Any, project: Path) -> Any:
    stores = []

    def factory(client: Any, debug: bool = True) -> Any:
        app, store = make_app(cobalt_home, sandbox, client, problem=None, turns=3, cwd=project)
        app.initial_debug = (project / "calc.py", "python -m pytest -q", None) if debug else None
        stores.append(store)
        return app

    yield factory
    for store in stores:
        store.close()


def _rows(table: ResultsTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def test_a_debug_session_shows_the_failure_fixes_the_file_and_undoes_it(debug_app: Any, project: Path) -> None:
    app = debug_app(ScriptedClient([answer(WRONG), answer(FIXED)]))

    async def scenario() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            assert app.controller.debug_file == (project / "calc.py").resolve()
            await pilot.press(APPLY_FIX_KEY)  # nothing passes yet: nothing is written
            await pilot.press("ctrl+r")
            await idle(pilot, app)
            timeline = app.query_one(TurnTimeline)
            assert timeline.option_count == 2 and app.controller.status.phase == PASSED
            statement = app.query_one(ProblemView).query_one("#statement").source
            assert "The failing tests point at" in statement and "`mul` (lines 4-5)" in statement
            assert "return a + b" in statement and "math.pi" not in statement  # only the implicated code
            assert all(row[-1] == "✔ passed" for row in _rows(app.query_one(ResultsTable)))
            await pilot.press(APPLY_FIX_KEY)
            await pilot.pause()
            assert (project / "calc.py").read_text() == BROKEN.replace("a + b", "a * b")
            assert (project / "calc.py.orig").read_text() == BROKEN
            editor = app.query_one(ProgramEditor)
            editor.focus()
            before = editor.text
            await pilot.press("end", "x", "ctrl+z")  # the editor's undo: the typing goes, the file stays fixed
            await pilot.pause()
            assert editor.text == before and (project / "calc.py").read_text() == BROKEN.replace("a + b", "a * b")
            await pilot.press(UNDO_FIX_KEY)
            await pilot.pause()
            assert (project / "calc.py").read_text() == BROKEN and not (project / "calc.py.orig").exists()

    asyncio.run(scenario())
    titles = [n[1] for n in app.notices]
    assert "Fix applied" in titles and "Undone" in titles
    solved = next(n[2] for n in app.notices if n[1] == "Solved")
    assert f"{APPLY_FIX_KEY} writes the fix into calc.py" in solved and "ctrl+s" not in solved
    assert ("warning", "", "No turn passes every test yet; nothing to write.") in app.notices


def test_writing_over_uncommitted_changes_asks_first(debug_app: Any, project: Path) -> None:
    """f2 on a file with uncommitted git changes (the usual case while debugging): the TUI asks,
    instead of refusing with advice to pass --force, which it has no way to take."""
    commit_all(project)
    edited = BROKEN + "\n# my own edit\n"
    (project / "calc.py").write_text(edited)
    app = debug_app(ScriptedClient([answer(FIXED)]))

    async def scenario() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            await pilot.press("ctrl+r")
            await idle(pilot, app)
            await pilot.press(APPLY_FIX_KEY)
            await pilot.pause()
            assert "uncommitted changes" in str(app.screen.query_one("#confirm-question").render())
            await pilot.press("n")  # no: nothing written
            await pilot.pause()
            assert (project / "calc.py").read_text() == edited
            await pilot.press(APPLY_FIX_KEY)
            await pilot.pause()
            await pilot.press("y")
            await pilot.pause()
            assert (project / "calc.py").read_text() == edited.replace("a + b", "a * b")
            assert (project / "calc.py.orig").read_text() == edited

    asyncio.run(scenario())


def test_the_persons_own_edit_is_tested_as_the_whole_file_they_typed(debug_app: Any, project: Path) -> None:
    """ctrl+t in a debug session: a changed constant or import is the person's edit too; the turn
    tests the file exactly as the editor holds it and the editor keeps it."""
    app = debug_app(ScriptedClient([]))
    typed = BROKEN.replace("import math\n", "import math\n\nSCALE = 1\n").replace("a + b", "a * b * SCALE")

    async def scenario() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            app.query_one(ProgramEditor).load_text(typed)
            await pilot.press("ctrl+t")
            await idle(pilot, app)
            (turn,) = [t for t in app.controller.turns if t.author == "human"]
            assert turn.program == typed and turn.passed_public
            assert app.query_one(ProgramEditor).text == typed

    asyncio.run(scenario())


def test_f2_writes_the_passing_program_in_the_editor_and_asks_before_one_not_shown(
    debug_app: Any, project: Path
) -> None:
    """The model's turn passes; the person tidies it and tests it (ctrl+t, it passes too): f2 writes
    their version, not the model's earlier one. With a program in the editor that no passing turn
    holds, f2 asks before writing the first passing turn's, which the person has not seen there."""
    app = debug_app(ScriptedClient([answer(FIXED)]))
    tidied = BROKEN.replace("import math\n", "import math\n\nSCALE = 1\n").replace("a + b", "a * b * SCALE")

    async def scenario() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            await pilot.press("ctrl+r")
            await idle(pilot, app)
            app.query_one(ProgramEditor).load_text(tidied)
            await pilot.press("ctrl+t")
            await idle(pilot, app)
            await pilot.press(APPLY_FIX_KEY)
            await pilot.pause()
            assert (project / "calc.py").read_text() == tidied
            await pilot.press(UNDO_FIX_KEY)
            await pilot.pause()
            app.query_one(ProgramEditor).load_text(BROKEN + "# being typed\n")
            await pilot.press(APPLY_FIX_KEY)
            await pilot.pause()
            assert "The editor does not show the fix" in str(app.screen.query_one("#confirm-question").render())
            await pilot.press("n")
            await pilot.pause()
            assert (project / "calc.py").read_text() == BROKEN

    asyncio.run(scenario())


def test_the_previous_turns_failing_test_stays_visible_while_the_next_turn_streams(debug_app: Any) -> None:
    client = ScriptedClient([answer(WRONG), answer(FIXED)], hold_at=3, hold_request=2)
    app = debug_app(client)

    async def scenario() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            await pilot.press("ctrl+r")
            await wait_for(pilot, client.held.is_set, what="turn 2 to stream")
            await pilot.pause()
            table = app.query_one(ResultsTable)
            assert table.border_title.startswith("Results · turn 1")
            first = _rows(table)[0]
            assert first[0] == "test_mul" and first[2].startswith("assert -1 == 6") and first[3] == "✘ failed"
            client.release.set()
            await idle(pilot, app)

    asyncio.run(scenario())


def test_the_open_dialog_opens_a_debug_session_from_file_and_test_command(debug_app: Any, project: Path) -> None:
    app = debug_app(None, debug=False)

    async def scenario() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            for typed, command in (
                ("calc.py --test python -m pytest -q", "python -m pytest -q"),
                ('calc.py --test python -m pytest -q -k "mul or area"', 'python -m pytest -q -k "mul or area"'),
                ("calc.py --test 'python -m pytest'", "python -m pytest"),  # quoted whole: the quotes go
            ):
                await pilot.press("ctrl+o")
                await pilot.pause()
                await pilot.press("tab")
                for key in typed:
                    await pilot.press(KEY_NAMES.get(key, key))
                await pilot.press("enter")
                await pilot.pause()
                assert app.controller.debug_file == (project / "calc.py").resolve()
                assert app.controller.problem.test_command == command

    asyncio.run(scenario())


def test_a_bug_the_small_edit_search_fixes_shows_as_a_search_turn_without_the_model(
    debug_app: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COBALT__DEBUG__SEARCH__ENABLED", "true")  # tests/conftest.py turns it off
    off_by_one = BROKEN.replace("a + b", "a * b + 1")
    (project / "calc.py").write_text(off_by_one)
    client = ScriptedClient([])
    app = debug_app(client)
    phases: list[str] = []

    async def scenario() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: phases.append(app.controller.status.phase) or app.controller.busy is None)
            await pilot.pause()
            (turn,) = app.controller.turns
            assert turn.author == "search" and app.controller.status.phase == PASSED
            assert "search" in str(app.query_one(TurnTimeline).get_option_at_index(0).prompt)
            await pilot.press(APPLY_FIX_KEY)
            await pilot.pause()
            assert (project / "calc.py").read_text() == BROKEN.replace("a + b", "a * b + 0")

    asyncio.run(scenario())
    assert client.requests == 0  # the model was never asked
    assert any(p.startswith("trying small edits") for p in phases)


def test_a_run_stopped_by_the_deadline_says_so(debug_app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`debug.deadline_s`: after a model turn, no other starts unless the longest so far would end
    in time; a run of the user's file and a turn take far more than 1 ms, so one turn is all."""
    monkeypatch.setenv("COBALT__DEBUG__DEADLINE_S", "0.001")
    client = ScriptedClient([answer(WRONG), answer(FIXED)])
    app = debug_app(client)

    async def scenario() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            await pilot.press("ctrl+r")
            await idle(pilot, app)
            assert app.query_one(TurnTimeline).option_count == 1 and client.replies == [answer(FIXED)]
            assert app.controller.status.phase == "unsolved (no time for another turn: 0.001 s)"

    asyncio.run(scenario())
