"""End to end: the real vLLM server (tiny random model) and the real sandbox. The tiny
model writes garbage, so these tests check mechanics (turns stored with statuses, token
counts, chained contexts, concurrency), never correctness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from assistant.loop import feedback, prompts, recorder
from assistant.loop.collect import collect
from assistant.loop.session import Session, TokenStreamed
from assistant.settings import LoopSettings
from assistant.store.trajectory import PASSED, UNSOLVED
from assistant.store.trajectory_db import Store
from tests.assistant.cli.test_cli_solve import EXAMPLE, use_model
from tests.assistant.sample_problems import sum_problem

pytestmark = [pytest.mark.docker, pytest.mark.server]


def test_session_with_the_real_server_and_sandbox(cobalt_home: Path, tiny_server: Any, sandbox: Any) -> None:
    client = tiny_server.chat_client(display_name="tiny", max_tokens=48)
    tokens: list[str] = []
    with Store.open() as store:
        session = recorder.record(
            Session(
                sum_problem(),
                client,
                sandbox,
                LoopSettings(turns=2, repeat_resamples=1),
                subscriber=lambda e: tokens.append(e.text) if isinstance(e, TokenStreamed) else None,
            ),
            store,
        )
        status = session.run()
        record = store.session(session.id)
    assert status in (PASSED, UNSOLVED) and record.status == status
    assert 1 <= len(record.turns) <= 2 and record.model == "tiny"
    for turn in record.turns:
        assert turn.status in ("no_code", "failed", "passed") and turn.tokens > 0 and turn.latency_s > 0
        assert turn.feedback and turn.feedback_message == prompts.style().feedback_content(turn.feedback)
        if turn.program is None:
            assert turn.feedback == feedback.NO_CODE and turn.public is None
        else:
            assert turn.hidden is not None and len(turn.hidden.tests) == 3
    assert "".join(tokens).startswith(record.turns[0].reply[:10])
    if len(record.turns) == 2:
        assert record.turns[1].messages[-1]["content"] == record.turns[0].feedback_message


def test_solve_and_collect_through_the_cli(
    cobalt_home: Path,
    tiny_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    sandbox: Any,
) -> None:
    use_model(monkeypatch, tiny_server.chat_client(display_name="tiny", max_tokens=32))
    assert main(["solve", str(EXAMPLE), "--turns", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] in (PASSED, UNSOLVED) and 1 <= len(result["turns"]) <= 2
    assert all({"public_pass_rate", "hidden_pass_rate", "status"} <= set(t) for t in result["turns"])
    from assistant.problems.resolve import load_problems

    with Store.open() as store:
        report = collect(
            load_problems("humaneval:2"),
            tiny_server.chat_client(display_name="tiny", max_tokens=32),
            sandbox,
            store,
            LoopSettings(turns=2),
            samples=2,
            concurrency=4,
        )
        assert report.planned == 4 and sum(report.statuses.values()) == 4
        assert set(report.statuses) <= {PASSED, UNSOLVED}
        assert store.counts()[0] == 5
