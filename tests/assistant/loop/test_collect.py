"""`cobalt collect`: K sessions per problem, concurrent, resumable, overlap measured."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from assistant.loop.collect import PhaseMeter, collect
from assistant.loop.session import ProgramExtracted, TurnFinished, TurnStarted
from assistant.problems.resolve import load_problems
from assistant.problems.sources import _humaneval_rows
from assistant.settings import LoopSettings
from assistant.store.trajectory_db import Store
from tests.assistant.cli.test_cli_solve import use_model
from tests.assistant.loop_fakes import ScriptedClient, answer

pytestmark = pytest.mark.docker


class OracleClient(ScriptedClient):
    """Answers HumanEval problems with the canonical solution, wrong on the first turn of
    odd-numbered problems; each reply takes `delay_s` like a real model."""

    def __init__(self, delay_s: float = 0.2) -> None:
        super().__init__([], name="oracle")
        self.delay_s = delay_s
        self.rows = _humaneval_rows()

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        time.sleep(self.delay_s)
        self.calls.append({"messages": [dict(m) for m in messages]})
        for number, row in enumerate(self.rows):
            if row["prompt"].strip() in messages[1]["content"]:
                if number % 2 and len(messages) == 2:
                    return {"mock_response": answer(f"def {row['entry_point']}(*args):\n    return None")}
                return {"mock_response": answer(row["prompt"] + row["canonical_solution"])}
        raise AssertionError("not a HumanEval prompt")


def test_collect_runs_k_samples_resumes_and_overlaps(cobalt_home: Path, sandbox: Any) -> None:
    problems = load_problems("humaneval:3")
    with Store.open() as store:
        report = collect(problems, OracleClient(), sandbox, store, LoopSettings(turns=3), samples=2, concurrency=3)
        assert (report.planned, report.already_stored, dict(report.statuses), report.turns) == (6, 0, {"passed": 6}, 8)
        sessions = store.sessions(source="collect", with_turns=True)
        assert sorted(len(s.turns) for s in sessions) == [1, 1, 1, 1, 2, 2]
        assert {s.model for s in sessions} == {"oracle"}
        assert report.overlap["max_requests_in_flight_while_executing"] >= 1
        assert report.overlap["executing_s"] > 0
        again = collect(problems, OracleClient(), sandbox, store, LoopSettings(turns=3), samples=2, concurrency=3)
        assert (again.planned, again.already_stored) == (0, 6)
        more = collect(problems, OracleClient(0), sandbox, store, LoopSettings(turns=3), samples=3, concurrency=2)
        assert (more.planned, more.already_stored) == (3, 6) and store.counts()[0] == 9
        # sampled otherwise (the ceiling's recipe): the sessions above do not count for it
        ceiling = LoopSettings(turns=2, temperature=[0.0, 1.0])
        other = collect(problems, OracleClient(0), sandbox, store, ceiling, samples=1, concurrency=3)
        assert (other.planned, other.already_stored) == (3, 0)
        assert collect(problems, OracleClient(0), sandbox, store, ceiling, samples=1, concurrency=3).planned == 0
    from assistant.loop.collect import sampling_meta, stored_alike

    with Store.open() as store:  # a session stored before the sampling was recorded counts as before
        legacy = store.start_session(problems[0], "old", "collect")
        store.set_status(legacy, "passed")
        assert stored_alike(store, sampling_meta(LoopSettings(turns=3), False))(problems[0], "old") == 1


def test_two_collections_at_once_store_each_session_once(cobalt_home: Path, sandbox: Any) -> None:
    """Two `cobalt collect`s of one model into one store (two processes: each its own connection):
    the second waits for the first and then finds every session stored, instead of both counting
    the same stored sessions and running the missing ones twice."""
    problems = load_problems("humaneval:2")
    waited: list[str] = []
    reports: dict[str, Any] = {}

    def run(name: str) -> None:
        with Store.open() as store:
            reports[name] = collect(
                problems,
                OracleClient(0.5),
                sandbox,
                store,
                LoopSettings(turns=2),
                samples=2,
                concurrency=2,
                on_wait=lambda: waited.append(name),
            )

    first = threading.Thread(target=run, args=("first",))
    first.start()
    time.sleep(0.3)  # the first holds the lock: its sessions are running
    run("second")
    first.join()
    assert (reports["first"].planned, reports["second"].planned, reports["second"].already_stored) == (4, 0, 4)
    with Store.open() as store:
        assert len(store.sessions(source="collect")) == 4
    assert waited == ["second"]


def test_collect_shares_a_greedy_first_turn(cobalt_home: Path, sandbox: Any) -> None:
    problems = load_problems("humaneval:3")  # the oracle fails turn 0 of the second only
    greedy_first = LoopSettings(turns=2, temperature=[0.0, 1.0])
    client = OracleClient(0)
    with Store.open() as store:
        report = collect(
            problems, client, sandbox, store, greedy_first, samples=3, concurrency=3, share_first_turn=True
        )
        sessions = store.sessions(source="collect", with_turns=True)
    assert (report.planned, dict(report.statuses), report.shared_turns) == (9, {"passed": 9}, 6)
    assert len(client.calls) == 3 + 3  # one first turn per problem, then the second's three repairs
    by_problem: dict[str, list[Any]] = {}
    for s in sessions:
        by_problem.setdefault(s.problem_id, []).append(s)
    for group in by_problem.values():
        leader = [s for s in group if "first_turn_from" not in s.meta]
        assert len(leader) == 1 and {s.meta.get("first_turn_from", leader[0].id) for s in group} == {leader[0].id}
        assert len({(s.turns[0].program, s.turns[0].public_pass_rate) for s in group}) == 1
    assert sorted(len(s.turns) for s in sessions) == [1] * 6 + [2] * 3
    with Store.open() as store:  # sampled first turns are never shared
        sampled = collect(
            load_problems("humaneval:4")[3:],
            OracleClient(0),
            sandbox,
            store,
            LoopSettings(turns=2, temperature=[0.6]),
            samples=2,
            concurrency=2,
            share_first_turn=True,
        )
    assert (sampled.planned, sampled.shared_turns) == (2, 0)


def test_phase_meter_integrates_overlap() -> None:
    meter = PhaseMeter()
    meter(TurnStarted("a", 0, 0, 0.6))
    meter(ProgramExtracted("a", 0, "print(1)", False))
    meter(TurnStarted("b", 0, 0, 0.6))
    time.sleep(0.5)  # long against a loaded machine's scheduling delay between the calls above
    meter(TurnFinished("a", None))  # type: ignore[arg-type]
    report = meter.report()
    assert report["max_requests_in_flight_while_executing"] == 1
    assert report["overlap_s"] >= 0.45 and report["share_of_execution_with_requests_in_flight"] > 0.5
    assert (meter.generating, meter.executing) == (1, 0)


def test_collect_cli_prints_report_and_stats(
    cobalt_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_model(monkeypatch, OracleClient(0))
    argv = [
        "collect",
        "humaneval:2",
        "--split",
        "all",
        "--samples",
        "2",
        "--turns",
        "2",
        "--concurrency",
        "2",
        "--json",
    ]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["report"]["statuses"] == {"passed": 4} and result["stats"]["sessions"] == 4
    assert result["stats"]["groups"][0]["solved_by_turn"] == [0.5, 1.0]
    assert main(argv[:-1]) == 0
    out = capsys.readouterr().out
    assert "ran 0 session(s)" in out and "4 sessions · 6 turns · 2 problems" in out


def test_collect_cli_serves_the_adapter_asked(
    cobalt_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--adapter base` reaches the server as the bare model (a ceiling of the base in a home whose
    shipped adapter is promoted used to collect the adapter's sessions); `--adapter vN` that version."""
    asked: list[Any] = []

    def resolve(cfg: Any, model: Any = None, **kw: Any) -> OracleClient:
        asked.append(kw["adapter"])
        return OracleClient(0)

    monkeypatch.setattr("assistant.serving.connect.resolve_client", resolve)
    argv = ["collect", "humaneval:1", "--split", "all", "--samples", "1", "--turns", "1", "--json"]
    assert main([*argv, "--adapter", "base"]) == 0
    assert main([*argv, "--adapter", "v3"]) == 0
    assert asked == ["base", "v3"]
    capsys.readouterr()


def test_collect_stops_when_the_model_keeps_failing(
    cobalt_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = ScriptedClient([Exception("model server is gone")] * 20)
    use_model(monkeypatch, failing)
    assert main(["collect", "humaneval:10", "--split", "all", "--samples", "1", "--concurrency", "1"]) == 1
    assert len(failing.calls) == 3  # three sessions in a row failed the same way: stop
    out, err = capsys.readouterr()
    assert "collection stopped" in err and "model server is gone" in err
    with Store.open() as store:
        assert store.counts() == (0, 0)
    assert main(["collect", "nowhere/problems"]) == 1
    assert "no such problem file or directory" in capsys.readouterr().err


def test_collect_cli_takes_a_split(
    cobalt_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from assistant.problems.splits import split_ids
    from assistant.settings_loader import load_settings

    use_model(monkeypatch, OracleClient(0))
    assert (
        main(["collect", "humaneval", "--split", "train", "--limit", "3", "--samples", "1", "--turns", "2", "--json"])
        == 0
    )
    capsys.readouterr()
    ids = split_ids([row["task_id"] for row in _humaneval_rows()], load_settings().eval.split)
    with Store.open() as store:
        collected = {s.problem_id for s in store.sessions(source="collect")}
    train_order = [row["task_id"] for row in _humaneval_rows() if row["task_id"] in set(ids["train"])]
    assert collected == set(train_order[:3]) and not collected & set(ids["test"] + ids["val"])
    assert main(["collect", "humaneval:2", "--split", "val"]) == 1
    assert "the 'val' split holds no problems" in capsys.readouterr().err
    # The default is train, and a subset keeps every task's split in the whole of HumanEval.
    assert main(["collect", "humaneval:10", "--samples", "1", "--turns", "1", "--json"]) == 0
    with Store.open() as store:
        collected = {s.problem_id for s in store.sessions(source="collect")}
    assert collected == set(train_order[:3]) | {f"HumanEval/{i}" for i in range(10) if f"HumanEval/{i}" in ids["train"]}
    assert {"HumanEval/3", "HumanEval/7"} <= set(ids["test"] + ids["val"])


def test_collect_full_horizon_and_first_turn_temperature(
    cobalt_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_model(monkeypatch, OracleClient(0))
    assert (
        main(
            [
                "collect",
                "humaneval:2",
                "--split",
                "all",
                "--samples",
                "1",
                "--turns",
                "3",
                "--full-horizon",
                "--first-temperature",
                "1.1",
                "--temperature",
                "0.2",
                "--json",
            ]
        )
        == 0
    )
    capsys.readouterr()
    with Store.open() as store:
        sessions = store.sessions(source="collect", with_turns=True)
    assert [len(s.turns) for s in sessions] == [3, 3]  # passed at turn 0 or 1, and kept going
    assert all(s.status == "passed" and s.turns[-1].passed_public for s in sessions)
    temps = [[t.temperature for t in s.turns] for s in sessions]
    assert [t[0] for t in temps] == [1.1, 1.1] and 0.2 in temps[0] + temps[1]
    assert set(temps[0][1:] + temps[1][1:]) <= {0.2, 1.0}  # 1.0: a repeated program resampled


def test_ctrl_c_ends_each_running_session_after_its_turn_and_starts_no_more(cobalt_home: Path, sandbox: Any) -> None:
    """Ctrl-C in `cobalt collect`: it waited for every running session to take all its turns, and a
    second Ctrl-C closed the store under them, leaving them `running`; now each ends after the turn
    it is taking, stored `interrupted`, before collect raises."""
    import signal
    import threading

    problems = load_problems("humaneval:4")[1:]  # the first runs are of an odd problem: wrong at turn 0
    ctrl_c = lambda: signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)  # noqa: E731
    timer = threading.Timer(0.5, ctrl_c)  # during the first turns
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, whatever ran before
    try:
        with Store.open() as store:
            timer.start()
            with pytest.raises(KeyboardInterrupt):
                collect(
                    problems, OracleClient(delay_s=1.0), sandbox, store, LoopSettings(turns=3), samples=3, concurrency=2
                )
            sessions = store.sessions(source="collect", with_turns=True)
    finally:
        signal.signal(signal.SIGINT, before)
    assert len(sessions) == 2 and {s.status for s in sessions} == {"interrupted"}  # none left `running`
    assert [len(s.turns) for s in sessions] == [1, 1]  # the turn it was taking, not the repair after it
