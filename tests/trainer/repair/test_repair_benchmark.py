"""The repair benchmark against the real sandbox with litellm `mock_response` models of
known behaviour: one that fixes the program only when it is shown the feedback (fix rate 1
with feedback, 0 blind, blind replies unchanged), one that never writes code; the exact
conversation it gets; sessions stored as `eval`; `cobalt eval -b repair:FILE` and
`eval compare` of two repair reports paired by item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from assistant.cli import main
from assistant.loop import prompts
from assistant.serving.chat import ChatClient
from assistant.settings import BootstrapSection, EvalSection, LoopSettings
from assistant.store.trajectory_db import Store
from tests.trainer.trainer_fakes import inc_problem
from trainer.repair.items import RepairItem, write_items
from trainer.repair.repair_run import run_repair
from trainer.repair.wording import reask

pytestmark = pytest.mark.docker
INC = inc_problem()
RIGHT = "def inc(x):\n    return x + 1\n"
ITEMS = [
    RepairItem("inc#m0", INC, "def inc(x):\n    return x\n"),
    RepairItem("inc#m1", INC, "def inc(x):\n    return x - 1\n"),
    RepairItem("inc#m2", INC, RIGHT),
]  # passes the public tests: invalid, never asked
Policy = Callable[[list[dict[str, str]]], str]


def uses_feedback(messages: list[dict[str, str]]) -> str:
    if "Here is the execution feedback:" in messages[-1]["content"]:
        return f"Fixed.\n\n```python\n{RIGHT}```\n"
    return messages[-2]["content"]  # the re-ask: the same program again


def no_code(messages: list[dict[str, str]]) -> str:
    return "Let me think about the expected output step by step..."


class Behaving(ChatClient):
    def __init__(self, policy: Policy) -> None:
        super().__init__("openai/mock", display_name=policy.__name__, retries=0, timeout_s=30)
        self.policy, self.seen = policy, []

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        self.seen.append(messages)
        return {"mock_response": self.policy(messages)}


class Refusing(Behaving):
    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        raise AssertionError("a stored session should have been reused")


SETTINGS = EvalSection(bootstrap=BootstrapSection(resamples=200))
LOOP = LoopSettings(max_tokens=64)


def test_feedback_against_blind_control(cobalt_home: Path, sandbox: Any) -> None:
    client = Behaving(uses_feedback)
    with Store.open() as store:
        report = run_repair(ITEMS, client, sandbox, store, loop=LOOP, turns=2, settings=SETTINGS)
        assert len(store.sessions(source="eval")) == 6 and store.sessions(source="collect") == []
    assert report.invalid() == ["inc#m2"] and report.aborted is None
    metrics = report.metrics()
    value = {arm: {m: [e.value for e in v[1:]] for m, v in by.items()} for arm, by in metrics.items()}
    assert value["feedback"] == {
        "fix_rate": [1.0, 1.0],
        "progress": [1.0, 1.0],
        "unchanged_rate": [0.0, None],
        "no_code_rate": [0.0, None],
    }
    assert value["blind"] == {
        "fix_rate": [0.0, 0.0],
        "progress": [0.0, 0.0],
        "unchanged_rate": [1.0, 1.0],
        "no_code_rate": [0.0, 0.0],
    }
    assert report.feedback_minus_blind()["fix_rate"][1].delta == 1.0
    # The conversation: the loop's own messages after a failed first turn (buggy program as the reply).
    first = next(
        m
        for m in client.seen
        if "return x\n" in m[2]["content"] and "Here is the execution feedback:" in m[3]["content"]
    )
    assert first[:2] == prompts.style().initial_messages(INC) and first[2] == {
        "role": "assistant",
        "content": "```python\ndef inc(x):\n    return x\n```",
    }
    text = prompts.feedback_of(first[3]["content"])
    assert first[3]["content"] == prompts.style().feedback_content(text) and "inc(1) == 2" in text
    blind = [m for m in client.seen if m[-1]["content"] == reask()]
    assert len(blind) == 4 and all(m[-1]["role"] == "user" for m in blind)
    verdicts = {(o.item, o.arm): o.verdict() for o in report.outcomes}
    assert verdicts[("inc#m0", "feedback")] == "fixed@1" and verdicts[("inc#m0", "blind")] == "unchanged"
    # A rerun reuses every finished session; another wording reuses only the blind control.
    with Store.open() as store:
        again = run_repair(ITEMS, Refusing(uses_feedback), sandbox, store, loop=LOOP, turns=2, settings=SETTINGS)
        assert (again.settings["sessions_run"], again.settings["sessions_reused"]) == (0, 6)
        assert [o.to_dict() for o in again.outcomes] == [o.to_dict() for o in report.outcomes]
        other = Behaving(uses_feedback)
        worded = run_repair(ITEMS, other, sandbox, store, loop=LOOP, turns=2, settings=SETTINGS, wording_name="brief")
        assert (worded.settings["sessions_run"], worded.settings["sessions_reused"]) == (3, 3)
        assert all(m[-1]["content"].startswith("Your previous program failed") for m in other.seen)


def test_no_code_and_wording(sandbox: Any) -> None:
    client = Behaving(no_code)
    report = run_repair(
        ITEMS[:2], client, sandbox, None, loop=LOOP, turns=1, blind=False, wording_name="code_first", settings=SETTINGS
    )
    assert report.arms == ["feedback"] and report.wording == "code_first"
    assert report.metrics()["feedback"]["no_code_rate"][1].value == 1.0
    assert all(m[-1]["content"].startswith("Your previous program is wrong.") for m in client.seen)


def test_command_and_compare(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bugs = tmp_path / "bugs.jsonl"
    write_items(ITEMS, bugs)
    clients = iter([Behaving(uses_feedback), Behaving(no_code)])
    monkeypatch.setattr("assistant.serving.connect.resolve_client", lambda *a, **kw: next(clients))
    for name in ("a", "b"):
        assert main(["eval", "-b", f"repair:{bugs}", "--turns", "1", "--out", str(tmp_path / name)]) == 0
    text = capsys.readouterr().out
    assert "- inc#m0: feedback fixed@1; blind unchanged" in text and "- inc#m2: feedback invalid" in text
    assert "| 1 | blind |" in text
    assert (
        main(["eval", "compare", str(tmp_path / "a" / "report.json"), str(tmp_path / "b" / "report.json"), "--json"])
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["pairs"] == 6 and result["deltas"]["feedback"]["fix_rate"][1]["delta"] == -1.0
    assert result["verdict"]["not_worse"] is False
    a, b = (str(tmp_path / name / "report.json") for name in ("a", "b"))
    assert main(["eval", "compare", a, b, "--json", "--metric", "no_code_rate", "--turn", "-1"]) == 0
    verdict = json.loads(capsys.readouterr().out)["verdict"]  # the flags are used, not passed over
    assert (verdict["metric"], verdict["turn"], verdict["delta"] > 0) == ("no_code_rate", 1, True)
    for flags, said in ((["--turn", "2"], "outside"), (["--metric", "pass_at_1"], "unknown metric")):
        assert main(["eval", "compare", a, b, *flags]) == 1
        assert said in capsys.readouterr().err
    assert main(["eval", "compare", a, b, "--plot", str(tmp_path / "p.png")]) == 1
    assert "no plot" in capsys.readouterr().err
    assert main(["eval", "-b", f"repair:{bugs}", "--temperature", "-0.5"]) == 1
    assert "--temperature must be 0 or more" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    assert main(["eval", "-b", f"repair:{bad}"]) == 1
    assert "bad.jsonl:1:" in capsys.readouterr().err
