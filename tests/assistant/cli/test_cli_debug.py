"""`cobalt debug FILE --test CMD`: a pytest-kind loop on a local project in the real
sandbox; the user's file changes only with --apply, after a backup."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from assistant.debug.fix_file import project_root
from assistant.store.trajectory_db import Store
from tests.assistant.cli.test_cli_solve import use_model
from tests.assistant.debug.projects import (
    CRASHING,
    DOUBLE,
    DOUBLE_TESTS,
    MEAN_FIXED,
    MUL_FIXED,
    calc_project,
    commit_all,
    stats_project,
)
from tests.assistant.loop_fakes import ByTemperature, ScriptedClient, answer

pytestmark = pytest.mark.docker
BROKEN = "def mul(a, b):\n    return a + b\n"
FIXED = "def mul(a, b):\n    return a * b\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return calc_project(tmp_path / "calc-project", BROKEN)


def test_debug_prints_the_diff_and_leaves_the_file_alone(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    client = ScriptedClient([answer("def mul(a, b):\n    return a - b"), answer(FIXED)])
    client.logit_bias = {1: -100.0}  # as model.suppress_docstrings gives a local model
    use_model(monkeypatch, client)
    assert main(["debug", str(project / "calc.py"), "--test", "python -m pytest -q"]) == 0
    assert [c["logit_bias"] for c in client.calls] == [None, None]  # the user's own files keep their docstrings
    assert client.logit_bias == {1: -100.0}  # a client shared with task sessions keeps its ban
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


@pytest.fixture
def stats_project_dir(tmp_path: Path) -> Path:
    return stats_project(tmp_path / "stats-project")


def test_without_a_file_the_failing_frames_name_it_and_the_model_sees_the_function_in_full(
    cobalt_home: Path, stats_project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    client = ScriptedClient([answer(MEAN_FIXED)])
    use_model(monkeypatch, client)
    monkeypatch.chdir(stats_project_dir)
    assert main(["debug", "--test", "python -m pytest -q", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and result["file"].endswith("pkg/stats.py") and not result["applied"]
    assert "-    return ratio(sum(xs), len(xs) - len(xs))\n+    return ratio(sum(xs), len(xs))\n" in result["diff"]
    prompt = client.calls[0]["messages"][1]["content"]
    assert "Failing test: tests/test_stats.py::test_mean" in prompt and "ZeroDivisionError" in prompt
    assert "pkg/stats.py:6: in mean" in prompt and "`mean` (lines 5-6)" in prompt
    assert (stats_project_dir / "pkg" / "stats.py").read_text() == CRASHING


def test_without_a_file_the_tests_run_once_before_the_first_edit(
    cobalt_home: Path, stats_project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from assistant.cli import debug_cmd

    follows: list[str] = []  # each sandbox run's Project.follow ("*": every project file)
    opened = debug_cmd.open_sandbox

    class Counting:
        def __init__(self, box: Any) -> None:
            self.box = box

        def run(self, program: str, tests: list, kind: str, limits: Any = None, project: Any = None) -> Any:
            follows.append(project.follow)
            return self.box.run(program, tests, kind, limits=limits, project=project)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.box, name)

    monkeypatch.setattr(debug_cmd, "open_sandbox", lambda settings: Counting(opened(settings)))
    use_model(monkeypatch, ScriptedClient([answer(MEAN_FIXED)]))
    monkeypatch.chdir(stats_project_dir)
    assert main(["debug", "--test", "python -m pytest -q", "--no-search", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["passed"]
    assert follows == ["*", ""]  # one run of the tests as given, then the model's edit


def test_an_edit_that_does_not_apply_is_the_next_feedback_with_the_current_code(
    cobalt_home: Path, stats_project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    miss = "<<<<<<< SEARCH\n    return total / count\n=======\n    return 0\n>>>>>>> REPLACE"
    hit = (
        "<<<<<<< SEARCH\n    return ratio(sum(xs), len(xs) - len(xs))\n=======\n"
        "    return ratio(sum(xs), len(xs))\n>>>>>>> REPLACE"
    )
    client = ScriptedClient([miss, hit])
    use_model(monkeypatch, client)
    target = str(stats_project_dir / "pkg" / "stats.py")
    assert main(["debug", target, "--test", "python -m pytest -q", "--edit-format", "search_replace", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and len(result["turns"]) == 2
    second = client.calls[1]["messages"][1]["content"]
    assert "could not be applied: the SEARCH part of block 1 does not match the current code" in second
    assert "len(xs) - len(xs)" in second and "SEARCH/REPLACE" in second


def test_undo_restores_the_last_applied_fix_once(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_model(monkeypatch, ScriptedClient([answer(FIXED)]))
    assert main(["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--apply"]) == 0
    assert (project / "calc.py").read_text() == FIXED and "cobalt debug --undo" in capsys.readouterr().out
    assert main(["debug", "--undo"]) == 0
    assert (project / "calc.py").read_text() == BROKEN and not (project / "calc.py.orig").exists()
    assert main(["debug", "--undo"]) == 1
    assert "there is no applied change to undo" in capsys.readouterr().err


def test_apply_refuses_a_file_with_uncommitted_git_changes_unless_forced(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    commit_all(project)
    edited = BROKEN + "\n# my own edit\n"
    (project / "calc.py").write_text(edited)
    use_model(monkeypatch, ScriptedClient([answer(FIXED)]))
    argv = ["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--apply"]
    assert main(argv) == 1
    assert "calc.py has uncommitted changes; commit or stash them first" in capsys.readouterr().err
    assert (project / "calc.py").read_text() == edited
    use_model(monkeypatch, ScriptedClient([answer(FIXED)]))
    assert main([*argv, "--force"]) == 0
    assert (project / "calc.py").read_text() == FIXED + "\n# my own edit\n"  # only `mul` was replaced
    assert (project / "calc.py.orig").read_text() == edited


def test_force_writes_over_uncommitted_changes_but_never_over_edits_made_during_the_run(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--force is for uncommitted git changes (the error about them asks for it); the fix was made
    from the text cobalt read, so edits typed into the file meanwhile must not be written over."""
    commit_all(project)
    (project / "calc.py").write_text(BROKEN + "# uncommitted\n")
    typed = BROKEN + "# uncommitted\n# typed while cobalt ran\n"

    class EditedMeanwhile(ScriptedClient):
        def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
            (project / "calc.py").write_text(typed)
            return super().request_kwargs(messages)

    use_model(monkeypatch, EditedMeanwhile([answer(FIXED)]))
    argv = ["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--apply", "--force", "--no-search"]
    assert main(argv) == 1
    assert "changed since cobalt read it" in capsys.readouterr().err
    assert (project / "calc.py").read_text() == typed


def test_resume_last_continues_the_stored_debug_session(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_model(monkeypatch, ScriptedClient([answer("def mul(a, b):\n    return a - b")]))
    assert main(["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--turns", "1"]) == 1
    use_model(monkeypatch, ScriptedClient([answer(FIXED)]))
    assert main(["debug", "--resume", "last", "--turns", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["passed"] and len(result["turns"]) == 2
    with Store.open() as store:
        (stored,) = store.sessions()
        assert (stored.status, len(store.turns(stored.id))) == ("passed", 2)
    use_model(monkeypatch, ScriptedClient([answer(FIXED)], name="another-model"))
    assert main(["debug", "--resume", "last", "--turns", "1"]) == 1  # its turns would be stored as scripted's
    assert "was run by scripted; resume it with that model" in capsys.readouterr().err
    with Store.open() as store:
        assert len(store.turns(stored.id)) == 2


BAD_INPUTS = [
    ("binary", "is a binary file"),
    ("latin1", "is not UTF-8 text"),
    ("outside", "is not inside the project"),
    ("missing-command", "the test command was not found in the sandbox"),
    ("no-tests", "collected no tests"),
    ("hang", "did not finish within its time limit"),
]


@pytest.mark.parametrize("case, sentence", BAD_INPUTS, ids=[c for c, _ in BAD_INPUTS])
def test_bad_input_is_one_sentence_with_a_json_result_and_the_tree_unchanged(
    case: str,
    sentence: str,
    cobalt_home: Path,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    idle = ScriptedClient([])
    use_model(monkeypatch, idle)
    monkeypatch.setenv("COBALT__DEBUG__TEST_TIMEOUT_S", "3")
    file, command, extra = project / "calc.py", "python -m pytest -q", []
    if case == "binary":
        (project / "blob.py").write_bytes(b"\x00\x01print(1)\n")
        file = project / "blob.py"
    elif case == "latin1":
        (project / "old.py").write_bytes("s = 'caf\xe9'\n".encode("latin-1"))
        file = project / "old.py"
    elif case == "outside":
        extra = ["--project", str(tmp_path / "elsewhere")]
        (tmp_path / "elsewhere").mkdir()
    elif case == "missing-command":
        command = "no-such-test-runner --all"
    elif case == "no-tests":
        command = "python -m pytest -q -k nothing_matches_this"
    elif case == "hang":
        command = "python -c 'import time; time.sleep(60)'"
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert main(["debug", str(file), "--test", command, "--json", *extra]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "error" and sentence in out["error"] and "\n" not in out["error"]
    assert idle.calls == [] and {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before


def test_an_edit_that_does_not_help_is_undone_and_the_failing_tests_code_is_shown(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = calc_project(tmp_path / "double", DOUBLE, DOUBLE_TESTS)
    monkeypatch.setenv("COBALT__DEBUG__TEST_LINES", "15")
    client = ScriptedClient([answer("def double(a):\n    return mul(a, 2) + 0"), answer(MUL_FIXED)])
    use_model(monkeypatch, client)
    assert main(["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and len(result["turns"]) == 2
    first, second = (call["messages"][1]["content"] for call in client.calls)
    assert "`mul` (lines 1-2), `double` (lines 5-6)" in first  # ranked by the tests' calls: mul first
    assert "The bug is most likely in `mul`." in first
    assert (
        "The failing test's code (it is right; do not change it):\n"
        "```python\ndef test_mul():\n    assert mul(2, 3) == 6\n```" in first
    )
    assert "changed `double` but the tests did not improve (1 passed before, 1 after), so it was undone" in second
    assert "mul(a, 2) + 0" not in second and "+ 0" not in result["diff"]  # the next edit applies to the file as given
    assert (project / "calc.py").read_text() == DOUBLE


def test_candidates_keep_the_edit_that_passes_the_most_tests(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three edits per turn: the greedy one passes no test, one sampled edit does not parse, the
    other passes both; the turn keeps the passing one, and the model saw one prompt thrice."""
    monkeypatch.setenv("COBALT__DEBUG__CANDIDATE_TEMPERATURE", "0.9")
    monkeypatch.setenv("COBALT__LOOP__TEMPERATURE", "[0.0]")
    unparsable = answer("def mul(a, b):\n    return (a *")
    client = ByTemperature({0.0: [answer("def mul(a, b):\n    return a - b")], 0.9: [unparsable, answer(FIXED)]})
    use_model(monkeypatch, client)
    argv = ["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--candidates", "3", "--json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and len(result["turns"]) == 1 and "+    return a * b\n" in result["diff"]
    assert sorted(client.temperatures) == [0.0, 0.9, 0.9]
    assert len({json.dumps(c["messages"]) for c in client.calls}) == 1
    with Store.open() as store:
        (listed,) = store.sessions()
        (turn,) = store.session(listed.id).turns
        assert turn.temperature == 0.9 and turn.program is not None and "a * b" in turn.program


class SlowClient(ScriptedClient):
    """Each reply takes `seconds`, as a model turn on a slow machine does."""

    def __init__(self, replies: list[str], seconds: float) -> None:
        super().__init__(replies)
        self.seconds = seconds

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        time.sleep(self.seconds)
        return super().request_kwargs(messages)


def test_no_model_turn_starts_that_would_end_past_the_deadline(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A turn of 1 s and more: after it, a second one cannot end within 1.5 s of the start."""
    replies = [answer("def mul(a, b):\n    return a - b"), answer(FIXED)]
    argv = ["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--no-search", "--turns", "3"]
    client = SlowClient(list(replies), 1.0)
    use_model(monkeypatch, client)
    assert main([*argv, "--deadline", "1.5", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert len(result["turns"]) == 1 and len(client.calls) == 1 and not result["passed"]
    assert result["deadline"]["seconds"] == 1.5 and result["deadline"]["turns"] == 1
    assert result["deadline"]["elapsed"] >= 1.0
    use_model(monkeypatch, SlowClient(list(replies), 1.0))
    assert main([*argv, "--deadline", "1.5"]) == 1  # the same, as text
    assert "another model turn would end past the 1.5 s deadline" in capsys.readouterr().out
    use_model(monkeypatch, SlowClient(list(replies), 1.0))
    assert main([*argv, "--deadline", "0", "--json"]) == 0  # no deadline: the second turn fixes it
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and len(result["turns"]) == 2 and result["deadline"] is None
    with pytest.raises(SystemExit):
        main([*argv, "--deadline", "-1"])
    assert "'-1' must be 0 or more" in capsys.readouterr().err


def test_a_file_that_does_not_parse_is_shown_whole_and_fixed_by_a_search_replace_block(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = calc_project(tmp_path / "syntax", "def mul(a, b)\n    return a * b\n")  # the colon missing
    reply = (
        "The `def` line lacks its colon.\n\n<<<<<<< SEARCH\ndef mul(a, b)\n=======\ndef mul(a, b):\n>>>>>>> REPLACE\n"
    )
    client = ScriptedClient([reply])
    use_model(monkeypatch, client)
    assert main(["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--apply"]) == 0
    prompt = client.calls[0]["messages"][1]["content"]
    assert "Here is `calc.py`:" in prompt and "def mul(a, b)\n    return a * b" in prompt
    assert "SEARCH/REPLACE" in prompt  # the functions format cannot place code in a file with no syntax tree
    assert (project / "calc.py").read_text() == FIXED


def test_ctrl_c_reports_the_best_edit_so_far_and_writes_nothing(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C during the second model turn: the first turn's better edit is still shown (and the
    --json object still printed), nothing is written though --apply was given, exit 130."""
    project = calc_project(tmp_path / "double", DOUBLE, DOUBLE_TESTS)
    better = "def mul(a, b):\n    if (a, b) == (2, 3):\n        return 6\n    return a + b"

    class Interrupted(ScriptedClient):
        def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
            if self.calls:
                raise KeyboardInterrupt
            return super().request_kwargs(messages)

    monkeypatch.setenv("COBALT__DEBUG__DEADLINE_S", "0")
    use_model(monkeypatch, Interrupted([answer(better)]))
    argv = ["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--apply", "--json", "--turns", "3"]
    assert main(argv) == 130
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert result["interrupted"] and not result["passed"] and not result["applied"]
    assert "+    if (a, b) == (2, 3):" in result["diff"] and "calc.py is unchanged" in err
    assert (project / "calc.py").read_text() == DOUBLE and not list(project.glob("*.orig*"))
