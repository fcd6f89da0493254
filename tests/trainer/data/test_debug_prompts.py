"""A stored `cobalt debug` session becomes bandit prompts like any other session: each turn's prompt
is the messages the model saw, the file that turn was shown (the best so far) is what an edit applies to, and the
reward runs the project's test command in the real sandbox (share of its tests that pass)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.problems.schema import Problem
from assistant.store.trajectory_db import Store
from tests.assistant.cli.test_cli_solve import use_model
from tests.assistant.debug.projects import DOUBLE, DOUBLE_TESTS, MUL_FIXED, MUL_WRONG, calc_project
from tests.assistant.loop_fakes import ScriptedClient, answer
from trainer.data.dataset import select
from trainer.training.reward import SandboxReward

pytestmark = pytest.mark.docker
BROKEN, WRONG, FIXED = DOUBLE, MUL_WRONG, MUL_FIXED


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return calc_project(tmp_path / "calc", DOUBLE, DOUBLE_TESTS)


def test_a_debug_session_gives_prompts_of_the_messages_it_saw_rewarded_by_the_test_command(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, sandbox
) -> None:
    client = ScriptedClient([answer(WRONG), answer(FIXED)])
    use_model(monkeypatch, client)
    assert main(["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--json"]) == 0
    with Store.open() as store:
        (stored,) = store.sessions()
        record = store.session(stored.id)
    assert record.source == "debug" and len(record.turns) == 2

    chosen = select([record])
    first, second = chosen.train  # the first turn's prompt, and the one after the failed edit
    assert first.messages() == client.calls[0]["messages"] and second.messages() == client.calls[1]["messages"]
    assert record.meta["baseline_pass_rate"] == pytest.approx(1 / 3)
    # the user's file passes 1 of 3: an edit must beat that, not 0, to earn progress
    assert first.problem.starter_code == BROKEN and first.prev_best == pytest.approx(1 / 3)
    assert second.problem.starter_code == BROKEN  # a - b passes no more tests (1 of 3): undone, as the model saw
    assert second.prev_best == pytest.approx(1 / 3)
    row = second.row("train")
    assert row["edit_format"] == "functions" and row["prompt"] == client.calls[1]["messages"]

    reward = SandboxReward(sandbox)
    blobs = [row["problem"]] * 3
    out = reward(
        [row["prompt"]] * 3,
        [answer(FIXED), answer("def mul(a, b):\n    return b - a"), "I cannot tell."],
        problem=blobs,
        prev_best=[row["prev_best"]] * 3,
        edit_format=[row["edit_format"]] * 3,
    )
    assert out[0] == 1.0  # every test of the command passes
    assert out[1] < 0  # no better than the user's file
    assert out[2] == -1.0  # no edit at all
    assert Problem.from_dict(json.loads(row["problem"]), "t", check_paths=False).kind == "pytest"


def test_a_bug_the_small_edit_search_fixed_is_a_first_turn_prompt_not_a_task_too_easy(
    cobalt_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, sandbox
) -> None:
    monkeypatch.setenv("COBALT__DEBUG__SEARCH__ENABLED", "true")  # tests/conftest.py turns it off
    (project / "calc.py").write_text(DOUBLE.replace("a + b", "a * b + 1"))
    use_model(monkeypatch, ScriptedClient([]))
    assert main(["debug", str(project / "calc.py"), "--test", "python -m pytest -q", "--json"]) == 0
    with Store.open() as store:
        (stored,) = store.sessions()
        record = store.session(stored.id)
    assert [t.author for t in record.turns] == ["search"] and record.turns[0].public_pass_rate == 1.0
    chosen = select([record])
    (first,) = chosen.train  # the prompt the model would have seen, for the model to answer
    assert first.messages() == record.turns[0].messages
    assert first.prev_best == pytest.approx(record.meta["baseline_pass_rate"])
    assert chosen.stats.to_dict().get("tasks_too_easy", 0) == 0
