"""`cobalt debug`'s small-edit search in the real sandbox: a bug one operator away is fixed before
the model is asked (and stored as a `search` turn); a bug no small edit fixes goes to the model;
`--no-search` skips it; an edit that makes the tests hang costs only `run_timeout_s`."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.store.trajectory_db import Store
from tests.assistant.cli.test_cli_solve import use_model
from tests.assistant.debug.projects import write_project
from tests.assistant.loop_fakes import ScriptedClient, answer

pytestmark = pytest.mark.docker
AGES = "def helper(n):\n    return n * 2\n\n\ndef is_adult(age, limit=18):\n    return age > limit\n"
AGES_FIXED = AGES.replace("age > limit", "age >= limit")
AGES_TESTS = (
    "from ages import is_adult\n\ndef test_eighteen():\n    assert is_adult(18)\n\n"
    "def test_seventeen():\n    assert not is_adult(17)\n\ndef test_forty():\n    assert is_adult(40)\n"
)
COMMAND = "python -m pytest -q"


@pytest.fixture(autouse=True)
def search_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COBALT__DEBUG__SEARCH__ENABLED", "true")  # tests/conftest.py turns it off


def ages_project(root: Path, module: str = AGES) -> Path:
    return write_project(root, {"ages.py": module, "tests/test_ages.py": AGES_TESTS})


def fixed_by_the_search_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, dict]:
    """`cobalt debug --json` on the ages project with a model that must not be asked; the search fixes it."""
    project = ages_project(tmp_path / "ages")
    idle = ScriptedClient([])
    use_model(monkeypatch, idle)
    assert main(["debug", str(project / "ages.py"), "--test", COMMAND, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and result["fixed_by"] == "search" and idle.calls == []
    return project, result


def test_a_bug_one_operator_away_is_fixed_by_the_search_without_asking_the_model(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, result = fixed_by_the_search_alone(tmp_path, monkeypatch, capsys)
    assert result["search"]["found"] == "line 6: `return age > limit` -> `return age >= limit`"
    assert result["search"]["operator"] == "compare", result["search"]["plausible"]
    # the same behaviour by putting back a term: also plausible, ranked below the one-token change
    assert result["search"]["plausible"] == [
        "line 6: `return age > limit` -> `return age + 1 > limit`",
        "line 6: `return age > limit` -> `return age > limit - 1`",
    ]
    assert 2 < result["search"]["tried"] <= 2 + 24  # the first batch, then more edits for other plausible fixes
    assert "-    return age > limit\n+    return age >= limit\n" in result["diff"]
    assert (project / "ages.py").read_text() == AGES  # nothing written without --apply
    with Store.open() as store:
        (record,) = store.sessions()
        (turn,) = store.session(record.id).turns
        assert (record.status, turn.author, turn.public_pass_rate) == ("passed", "search", 1.0)
        assert turn.messages and "is_adult" in turn.messages[-1]["content"]  # the prompt the model would have seen
    assert main(["debug", str(project / "ages.py"), "--test", COMMAND, "--apply", "--json"]) == 0
    assert (project / "ages.py").read_text() == AGES_FIXED and json.loads(capsys.readouterr().out)["applied"]


def test_a_file_too_long_for_the_models_context_is_still_searched(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The search needs no model: a prompt that does not fit (DoesNotFit) stopped it before it ran."""
    monkeypatch.setenv("COBALT__DEBUG__CONTEXT_TOKENS", "256")
    fixed_by_the_search_alone(tmp_path, monkeypatch, capsys)
    with Store.open() as store:
        (record,) = store.sessions()
        assert store.session(record.id).turns[0].messages == []  # no prompt fits: none is stored


def test_no_search_and_a_bug_no_small_edit_fixes_both_go_to_the_model(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = ages_project(tmp_path / "ages")
    client = ScriptedClient([answer("def is_adult(age, limit=18):\n    return age >= limit")])
    use_model(monkeypatch, client)
    assert main(["debug", str(project / "ages.py"), "--test", COMMAND, "--no-search", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["fixed_by"] == "model" and result["search"] is None and len(client.calls) == 1

    far = ages_project(tmp_path / "far", AGES.replace("age > limit", "str(age) + str(limit) == ''"))
    client = ScriptedClient([answer("def is_adult(age, limit=18):\n    return age >= limit")])
    use_model(monkeypatch, client)
    assert main(["debug", str(far / "ages.py"), "--test", COMMAND, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["fixed_by"] == "model" and result["search"]["found"] is None and result["search"]["tried"] > 0
    assert len(client.calls) == 1 and len(result["turns"]) == 1


def test_an_edit_that_makes_the_tests_hang_costs_only_the_search_run_timeout(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = (
        "def total(n):\n    steps = 0\n    i = 0\n    while i < n:\n        i += 1\n        steps += 1\n"
        "    return steps * 2\n"
    )
    tests = "from count import total\n\ndef test_three():\n    assert total(3) == 3\n"
    project = write_project(tmp_path / "count", {"count.py": loop, "tests/test_count.py": tests})
    monkeypatch.setenv("COBALT__DEBUG__SEARCH__RUN_TIMEOUT_S", "3")
    use_model(monkeypatch, ScriptedClient([]))
    start = time.monotonic()
    assert main(["debug", str(project / "count.py"), "--test", COMMAND, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["fixed_by"] == "search" and result["search"]["found"].endswith("`return steps * 1`")
    # `i += 0` and `i -= 1` (line 5, tried before line 7) never end: each stops at 3 s, not at debug's 120 s
    assert time.monotonic() - start < 60


def test_a_run_started_late_in_the_search_ends_with_the_searchs_time(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Time was checked only between batches: a batch of hanging edits ran its whole run timeout
    (20 s here) past a 4 s search."""
    loop = "def total(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i * 2\n"
    tests = "from count import total\n\ndef test_three():\n    assert total(3) == 3\n"
    project = write_project(tmp_path / "count", {"count.py": loop, "tests/test_count.py": tests})
    for key, value in (("RUN_TIMEOUT_S", "20"), ("MAX_SECONDS", "4")):
        monkeypatch.setenv(f"COBALT__DEBUG__SEARCH__{key}", value)
    monkeypatch.setenv("COBALT__DEBUG__PER_TEST_TIMEOUT_S", "0")  # only the run's own limit stops a hang
    use_model(monkeypatch, ScriptedClient([answer(loop)]))
    main(["debug", str(project / "count.py"), "--test", COMMAND, "--json", "--turns", "1"])
    result = json.loads(capsys.readouterr().out)
    assert result["search"]["seconds"] < 12, result["search"]


def test_when_no_edit_fixes_the_file_the_model_is_shown_the_edits_that_raised_the_passing_count(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two bugs on one line: `>=` alone passes one more test (a hint), no small edit passes all,
    so the model's first prompt lists that edit and its passing count."""
    two = AGES.replace("age > limit", "age > limit and str(age) != '40'")
    project = ages_project(tmp_path / "two", two)
    monkeypatch.setenv("COBALT__DEBUG__SEARCH__MAX_RUNS", "30")
    client = ScriptedClient([answer("def is_adult(age, limit=18):\n    return age >= limit")])
    use_model(monkeypatch, client)
    assert main(["debug", str(project / "ages.py"), "--test", COMMAND, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["fixed_by"] == "model" and result["search"]["found"] is None
    edit = "line 6: `return age > limit and str(age) != '40'` -> `return age >= limit and str(age) != '40'`"
    hint = {"edit": edit, "passed": 2}
    assert hint in result["search"]["partial"]
    prompt = client.calls[0]["messages"][-1]["content"]
    assert "raised the number of passing tests (1 pass as the file stands)" in prompt and hint["edit"] in prompt
