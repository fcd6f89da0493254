"""The one builder of debug sessions (assistant/debug/open_session.py), and one test run that
follows every project file standing in for a second run that follows the target."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.debug.debug_session import MIN_REPLY_TOKENS, DebugSession
from assistant.debug.edits import FORMATS, FUNCTIONS, FUNCTIONS_TRACED, SEARCH_REPLACE, WHOLE_FILE
from assistant.debug.fix_file import debug_problem, probe_problem
from assistant.debug.localize import spans
from assistant.debug.open_session import debug_settings, open_debug_session, without_docstring_ban
from assistant.debug.project_runs import LimitedRunner, baseline_run, for_file
from assistant.loop.session import Session
from assistant.settings import DebugSettings
from sandbox.api import RunResult, TestResult
from tests.assistant.debug.projects import CRASHING, stats_project
from tests.assistant.loop_fakes import ScriptedClient

TESTS = "python -m pytest -q"


def _problem(tmp_path: Path) -> Any:
    root = stats_project(tmp_path / "stats")
    return debug_problem(root / "pkg" / "stats.py", TESTS, root)


def test_the_settings_edit_formats_are_the_registry() -> None:
    allowed = DebugSettings.model_fields["edit_format"].annotation.__args__  # type: ignore[union-attr]
    assert tuple(allowed) == tuple(FORMATS) == (FUNCTIONS, FUNCTIONS_TRACED, SEARCH_REPLACE, WHOLE_FILE)
    assert FORMATS[FUNCTIONS].edits and FORMATS[SEARCH_REPLACE].edits and not FORMATS[WHOLE_FILE].edits
    assert [f.name for f in FORMATS.values() if f.whole_functions] == [FUNCTIONS, FUNCTIONS_TRACED]


def test_debug_settings_take_the_callers_choices(test_config: Any) -> None:
    on = test_config.debug.search.enabled
    assert debug_settings(test_config).search.enabled == on
    chosen = debug_settings(test_config, SEARCH_REPLACE, 3, False)
    assert (chosen.edit_format, chosen.candidates, chosen.search.enabled) == (SEARCH_REPLACE, 3, False)
    assert debug_settings(test_config, search=True).search.enabled
    with pytest.raises(ValueError, match="unknown edit format 'diff'"):
        debug_settings(test_config, "diff")


def test_an_edit_format_opens_a_debug_session_and_whole_file_the_plain_loop(test_config: Any, tmp_path: Path) -> None:
    problem, client, before = _problem(tmp_path), ScriptedClient([]), RunResult(tests=[TestResult("failed")])
    edits = open_debug_session(problem, client, object(), test_config, before, source="bench", stream=False)  # type: ignore[arg-type]
    assert isinstance(edits, DebugSession) and edits.debug.edit_format == test_config.debug.edit_format
    assert edits.first_run is before and edits.budget.context_tokens > 0
    whole = open_debug_session(
        problem,
        client,
        object(),  # type: ignore[arg-type]
        test_config,
        before,
        debug=debug_settings(test_config, WHOLE_FILE),
        source="bench",
        meta={"case": "x"},
    )
    assert type(whole) is Session and whole.meta == {"case": "x", "edit_format": WHOLE_FILE}
    assert whole.problem.starter_code == CRASHING


def test_a_debug_session_gets_the_client_without_its_docstring_ban() -> None:
    client = ScriptedClient([])
    client.logit_bias = {7: -100.0}
    plain = without_docstring_ban(client)
    assert plain is not client and plain.logit_bias is None and client.logit_bias == {7: -100.0}
    client.logit_bias = None
    assert without_docstring_ban(client) is client


@pytest.mark.docker
def test_one_run_following_every_file_gives_each_tests_lines_of_the_target(
    sandbox: Any, test_config: Any, tmp_path: Path
) -> None:
    problem = _problem(tmp_path)
    root = Path(str(problem.project_dir))
    runner = LimitedRunner.of(sandbox, test_config.sandbox.limits, test_config.debug)
    every = baseline_run(runner, probe_problem(root, TESTS, ".cobalt-probe.py"), follow="*")
    target = baseline_run(runner, problem)
    assert "pkg/stats.py" in (every.tests[0].files or {})
    assert not any(path.startswith(".cobalt") for t in every.tests for path in (t.files or {}))

    def seen(run: RunResult) -> list[tuple[Any, ...]]:
        return [(t.name, t.status, t.calls, t.lines) for t in run.tests]

    assert seen(for_file(every, "pkg/stats.py")) == seen(target)
    assert all(t.lines for t in target.tests)  # both tests ran lines of pkg/stats.py
    assert "files" not in target.tests[0].to_dict()  # a targeted run stores what it stored before


def test_a_traced_answer_gets_room_for_its_trace_beside_the_code(test_config: Any, tmp_path: Path) -> None:
    problem, before = _problem(tmp_path), RunResult(tests=[TestResult("failed")])
    source = problem.starter_code
    found = spans(source)
    caps = {}
    for fmt in (FUNCTIONS, FUNCTIONS_TRACED, SEARCH_REPLACE):
        debug = debug_settings(test_config, fmt)
        session = open_debug_session(
            problem, ScriptedClient([]), object(), test_config, before, debug=debug, source="bench"
        )  # type: ignore[arg-type]
        caps[fmt] = session._reply_limit(source, found, fmt)
    tokens = sum(session.budget.count(_text(source, s)) for s in found)
    scale = test_config.debug.reply_scale
    assert caps[FUNCTIONS] == max(MIN_REPLY_TOKENS, int(scale * tokens) + 64)
    assert caps[FUNCTIONS_TRACED] == max(MIN_REPLY_TOKENS, int(scale * tokens) + 256) > caps[FUNCTIONS]
    assert caps[SEARCH_REPLACE] == max(MIN_REPLY_TOKENS, int(scale * 2 * tokens) + 64)


def _text(source: str, span: Any) -> str:
    return "".join(source.splitlines(keepends=True)[span.start - 1 : span.end])
