"""`cobalt solve`: bad input is one sentence, a non-zero exit and an untouched store; a
scripted model runs the real loop on the real sandbox through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from assistant.cli import main
from assistant.store.trajectory_db import DB_NAME, Store
from tests.assistant.loop_fakes import RIGHT_SUM, WRONG_SUM, ByTemperature, ScriptedClient, answer

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "problems" / "sum-two.yaml"


def use_model(monkeypatch: pytest.MonkeyPatch, client: Any) -> None:
    monkeypatch.setattr("assistant.serving.connect.resolve_client", lambda cfg, model=None, **kw: client)


def _bad(tmp_path: Path, change: dict[str, Any]) -> Path:
    data = {**yaml.safe_load(EXAMPLE.read_text()), **change}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({k: v for k, v in data.items() if v is not None}))
    return path


BAD = [
    ({"id": None}, "the field 'id' is missing"),
    ({"statement": 42}, "the field 'statement' must be a string"),
    ({"kind": "rust"}, "the kind 'rust' is not supported"),
    ({"public_tests": [], "hidden_tests": []}, "the problem has no tests"),
    ({"public_tests": [{"input": "1"}]}, "public_tests[0]: a test case needs"),
    ({"hidden_tests": "none"}, "must be a list of tests"),
]


@pytest.mark.parametrize("change, message", BAD, ids=[m for _, m in BAD])
def test_bad_problem_files(
    cobalt_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], message: str
) -> None:
    assert main(["solve", str(_bad(tmp_path, change)), "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("cobalt: error: ") and message in err and err.count("\n") == 1
    assert not (cobalt_home / DB_NAME).exists()


def test_missing_problem_and_unknown_model(cobalt_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "no/such/problem.yaml"]) == 1
    assert "no such problem file or directory" in capsys.readouterr().err
    assert main(["solve", str(EXAMPLE), "--model", "no-such-model-anywhere"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("cobalt: error: ") and "no-such-model-anywhere" in err and err.count("\n") == 1
    assert not (cobalt_home / DB_NAME).exists()
    with pytest.raises(SystemExit) as exit_info:
        main(["solve", str(EXAMPLE), "--turns", "0"])
    assert exit_info.value.code == 2


def test_solve_json_reports_every_turn(
    cobalt_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_model(monkeypatch, ScriptedClient([answer(WRONG_SUM), answer(RIGHT_SUM)]))
    assert main(["solve", str(EXAMPLE), "--json", "--turns", "3"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "passed" and result["problem_id"] == "sum-two"
    assert [(t["public_pass_rate"], t["hidden_pass_rate"]) for t in result["turns"]] == [(0.0, 0.25), (1.0, 1.0)]
    with Store.open() as store:
        assert store.session(result["session_id"]).source == "cli"


def test_solve_candidates_keeps_the_sampled_reply_that_passes(
    cobalt_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--candidates 2`: the greedy first reply fails, the one sampled beside it passes, so the
    session passes in one turn; the stored turn names both scores."""
    monkeypatch.setenv("COBALT__LOOP__TEMPERATURE", "[0.0]")
    use_model(monkeypatch, ByTemperature({0.0: [answer(WRONG_SUM)], 1.0: [answer(RIGHT_SUM)]}))
    assert main(["solve", str(EXAMPLE), "--json", "--turns", "3", "--candidates", "2"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "passed" and len(result["turns"]) == 1
    with Store.open() as store:
        (turn,) = store.session(result["session_id"]).turns
    assert turn.candidates == [0, 2] and turn.temperature == 1.0
    with pytest.raises(SystemExit):
        main(["solve", str(EXAMPLE), "--candidates", "17"])
    assert "invalid choice" in capsys.readouterr().err


def test_solve_live_output_and_model_error_exit(
    cobalt_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_model(monkeypatch, ScriptedClient([answer(WRONG_SUM), Exception("the backend fell over")]))
    assert main(["solve", str(EXAMPLE)]) == 1
    out, err = capsys.readouterr()
    assert "turn 1/4" in out and "public 0/2" in out and "hidden 1/4" in out
    assert "status model_error after 1 turn(s)" in out
    assert err.startswith("cobalt: error: model scripted failed") and "the backend fell over" in err
