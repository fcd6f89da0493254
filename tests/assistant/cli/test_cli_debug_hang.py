"""A test that hangs is a failing test, not an error (debug.per_test_timeout_s): it fails where it
hangs, the other tests still run, and the search or the model fix the loop, in the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.cli import main
from tests.assistant.cli.test_cli_solve import use_model
from tests.assistant.debug.projects import write_project
from tests.assistant.loop_fakes import ScriptedClient, answer

pytestmark = pytest.mark.docker
LOOPS = (
    "def halve(n):\n    return n // 2\n\n\n"
    "def count_down(n):\n    steps = 0\n    while n != 0:\n        n -= 2\n        steps += 1\n    return steps\n"
)
FIXED = "def count_down(n):\n    steps = 0\n    while n > 0:\n        n -= 2\n        steps += 1\n    return steps"
TESTS = (
    "from steps import count_down, halve\n\ndef test_even():\n    assert count_down(4) == 2\n\n"
    "def test_odd():\n    assert count_down(3) == 2\n\ndef test_halve():\n    assert halve(8) == 4\n"
)
COMMAND = "python -m pytest -q"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COBALT__DEBUG__PER_TEST_TIMEOUT_S", "2")
    return write_project(tmp_path / "steps", {"steps.py": LOOPS, "tests/test_steps.py": TESTS})


def test_a_loop_that_never_ends_is_fixed_by_the_search(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COBALT__DEBUG__SEARCH__ENABLED", "true")  # tests/conftest.py turns it off
    idle = ScriptedClient([])
    use_model(monkeypatch, idle)
    assert main(["debug", str(project / "steps.py"), "--test", COMMAND, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and result["fixed_by"] == "search" and idle.calls == []
    assert "-    while n != 0:\n+    while n > 0:\n" in result["diff"]


def test_a_loop_that_never_ends_fails_where_it_hangs_and_the_model_fixes_it(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    client = ScriptedClient([answer(FIXED)])
    use_model(monkeypatch, client)
    assert main(["debug", str(project / "steps.py"), "--test", COMMAND, "--no-search", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and result["fixed_by"] == "model"
    prompt = client.calls[0]["messages"][1]["content"]
    assert "Failing test: tests/test_steps.py::test_odd" in prompt and "longer than its time limit of 2 s" in prompt
    assert "steps.py:" in prompt and "in count_down" in prompt  # the frame where it hung
