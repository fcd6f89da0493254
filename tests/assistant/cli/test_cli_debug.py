"""`cobalt debug FILE --test CMD`: a pytest-kind loop on a local project in the real
sandbox; the user's file changes only with --apply, after a backup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.debug.fix_file import project_root
from assistant.store.trajectory_db import Store
from tests.assistant.cli.test_cli_solve import use_model
from tests.assistant.loop_fakes import ScriptedClient, answer

pytestmark = pytest.mark.docker
BROKEN = "def mul(a, b):\n    return a + b\n"
FIXED = "def mul(a, b):\n    return a * b\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "calc-project"
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'calc'\n")
    (root / "calc.py").write_text(BROKEN)
    (root / "tests" / "test_calc.py").write_text(
        "from calc import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n\n"
        "def test_unit():\n    assert mul(1, 1) == 1\n"
    )
    return root


def test_debug_prints_the_diff_and_leaves_the_file_alone(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    client = ScriptedClient([answer("def mul(a, b):\n    return a - b"), answer(FIXED)])
    client.logit_bias = {1: -100.0}  # as model.suppress_docstrings gives a local model
    use_model(monkeypatch, client)
    assert main(["debug", str(project / "calc.py"), "--test", "python -m pytest -q"]) == 0
    assert client.logit_bias is None  # the user's own files keep their docstrings
    out = capsys.readouterr().out
    assert "0/2 tests pass now" in out and "the tests pass after 2 turn(s)" in out
    assert "-    return a + b\n+    return a * b\n" in out and "run again with --apply" in out
    assert (project / "calc.py").read_text() == BROKEN and not list(project.glob("*.orig*"))
    first_prompt = client.calls[0]["messages"][1]["content"]
    assert "`calc.py`" in first_prompt and "assert mul(2, 3) == 6" in first_prompt and BROKEN.strip() in first_prompt
    with Store.open() as store:
        (record,) = store.sessions()
        assert (record.source, record.status) == ("debug", "passed")


def test_debug_apply_writes_the_fix_and_keeps_a_backup(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_model(monkeypatch, ScriptedClient([answer(FIXED)]))
    assert main(["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--apply", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and result["applied"] and result["backup"].endswith("calc.py.orig")
    assert (project / "calc.py").read_text() == FIXED
    assert (project / "calc.py.orig").read_text() == BROKEN
    # Now the tests pass: nothing to do, the model is not asked.
    idle = ScriptedClient([])
    use_model(monkeypatch, idle)
    assert main(["debug", str(project / "calc.py"), "--test", "python -m pytest -q"]) == 0
    assert "already pass" in capsys.readouterr().out and idle.calls == []


def test_debug_apply_without_a_passing_fix_changes_nothing(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_model(monkeypatch, ScriptedClient([answer("def mul(a, b):\n    return 6")]))
    argv = ["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--apply", "--turns", "1"]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert "no fix passes every test" in out and "calc.py is unchanged" in err
    assert (project / "calc.py").read_text() == BROKEN and not (project / "calc.py.orig").exists()


def test_debug_bad_input(cobalt_home: Path, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in [
        ([str(project / "nope.py"), "--test", "pytest"], "no such file"),
        ([str(project / "pyproject.toml"), "--test", "pytest"], "fixes Python files"),
        ([str(project / "calc.py"), "--test", "  "], "the test command is empty"),
    ]:
        assert main(["debug", *argv]) == 1
        err = capsys.readouterr().err
        assert err.startswith("cobalt: error: ") and message in err and err.count("\n") == 1
    assert project_root(project / "tests" / "test_calc.py") == project.resolve()
