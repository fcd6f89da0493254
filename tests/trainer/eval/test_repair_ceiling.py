"""pass@k of the repair turn over stored first-turn failures (`trainer.eval.repair_ceiling`,
`cobalt eval ceiling`), on a real SQLite store: which sessions count (source, adapter), what
counts as fixed (every test of turn 1, never a tampered run), and the unbiased estimator."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.problems.schema import Problem
from assistant.settings import BootstrapSection
from assistant.store.trajectory import RUNNING, UNSOLVED, Turn
from assistant.store.trajectory_db import Store
from sandbox.api import RunResult, TestResult
from tests.assistant.loop_fakes import graded
from tests.assistant.sample_problems import add_problem
from trainer.eval.repair_ceiling import ceiling, ceiling_table, pass_at_k, task_repairs

FAST = BootstrapSection(resamples=300)


def turn(index: int, public: float, hidden: float, tampered: bool = False) -> Turn:
    result = RunResult(tests=[TestResult("passed" if public == 1 else "failed")], tampered=tampered)
    return Turn(
        index=index,
        messages=[{"role": "user", "content": "solve"}],
        reply="```python\nprint(1)\n```",
        program="print(1)\n",
        **graded(f"feedback {index}", result, public, hidden),
    )


def session(store: Store, problem: Problem, rates: list[tuple[float, float]], **kw: object) -> None:
    tampered = bool(kw.pop("tampered", False))
    status = str(kw.pop("status", UNSOLVED))
    model = str(kw.pop("model", "m"))
    sid = store.start_session(problem, model, str(kw.pop("source", "collect")), **kw)  # type: ignore[arg-type]
    for i, (public, hidden) in enumerate(rates):
        store.append_turn(sid, turn(i, public, hidden, tampered=tampered and i == 1))
    store.set_status(sid, status)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """Four tasks, 4 collected sessions each, adapter v1 (stored by its served name `m-v1`), plus
    sessions that must not count."""
    s = Store(tmp_path / "trajectories.db")
    fixes, solved, hidden_only, forged = (add_problem(pid) for pid in ("fixes", "solved", "hidden-only", "forged"))
    for i in range(4):
        session(s, fixes, [(0.0, 0.0), (1.0, 1.0) if i == 0 else (0.5, 0.5)], adapter_version="m-v1")
        session(s, solved, [(1.0, 1.0)], adapter_version="m-v1")
        session(s, hidden_only, [(1.0, 0.5)], adapter_version="m-v1")  # public passed: no repair turn
        session(s, forged, [(0.0, 0.0), (1.0, 1.0)], adapter_version="m-v1", tampered=i < 2)
    session(s, fixes, [(0.0, 0.0), (1.0, 1.0)], adapter_version="m-v2")  # another adapter
    session(s, fixes, [(0.0, 0.0), (0.0, 0.0)])  # the base model
    session(s, fixes, [(0.0, 0.0), (1.0, 1.0)], model="other")  # another model
    session(s, fixes, [(0.0, 0.0), (1.0, 1.0)], adapter_version="m-v1", source="eval")  # not collected
    session(s, fixes, [(0.0, 0.0)], adapter_version="m-v1", status=RUNNING)  # cut off before its repair
    for temperature in ([0.0], [1.0]):  # collected otherwise: greedy repairs, a sampled first turn
        sampling = {"collect": {"temperature": temperature, "top_p": 1.0, "turns": 2, "full_horizon": False}}
        session(s, fixes, [(0.0, 0.0), (1.0, 1.0)], adapter_version="m-v1", meta=sampling)
    recipe = {"collect": {"temperature": [0.0, 1.0], "top_p": 1.0, "turns": 2, "full_horizon": False}}
    session(s, hidden_only, [(1.0, 0.5)], adapter_version="m-v1", meta=recipe)  # the recipe's: counts
    return s


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(8, 0, 8) == 0.0 and pass_at_k(8, 8, 1) == 1.0
    assert pass_at_k(8, 1, 1) == pytest.approx(1 / 8) and pass_at_k(8, 1, 8) == 1.0
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - comb(2, 2) / comb(4, 2))
    with pytest.raises(ValueError):
        pass_at_k(4, 1, 5)


def test_only_collected_sessions_of_the_adapter_count_and_forged_fixes_do_not(store: Store) -> None:
    """...and only those sampled with the ceiling's recipe (or stored before sampling was recorded)."""
    ids = ["fixes", "solved", "hidden-only", "forged", "none"]
    repairs = {t.problem: t for t in task_repairs(store, ids, adapter="v1")}
    assert set(repairs) == {"fixes", "solved", "hidden-only", "forged"}  # a task without sessions is left out
    assert [(repairs["fixes"].sessions, repairs["fixes"].first_failed, repairs["fixes"].fixed)] == [(4, 4, 1)]
    assert repairs["solved"].first_failed == 0
    assert (repairs["hidden-only"].first_failed, repairs["hidden-only"].fixed) == (5, 0)
    assert (repairs["forged"].first_failed, repairs["forged"].fixed) == (4, 2)  # 2 of 4 repairs tampered
    everything = {t.problem: t for t in task_repairs(store, ["fixes"])}  # any adapter, still only `collect`
    assert (everything["fixes"].sessions, everything["fixes"].fixed) == (7, 3)
    (mine,) = task_repairs(store, ["fixes"], model="m")  # one model's sessions, any adapter
    assert (mine.sessions, mine.fixed) == (6, 2)
    (base,) = task_repairs(store, ["fixes"], model="m", adapter="base")  # its sessions without an adapter
    assert (base.sessions, base.fixed) == (1, 0)
    (served,) = task_repairs(store, ["fixes"], adapter="m-v2")  # the served name works as well as `v2`
    assert (served.sessions, served.fixed) == (1, 1) and task_repairs(store, ["fixes"], adapter="v3") == []


def test_ceiling_averages_pass_at_k_over_failed_tasks(store: Store) -> None:
    repairs = task_repairs(store, ["fixes", "solved", "hidden-only", "forged"], adapter="v1")
    result = ceiling(repairs, [1, 2, 4, 8], FAST)
    assert (result.tasks, result.failed_tasks, result.samples, result.fixed_by_any) == (4, 3, 4, 2)
    assert list(result.pass_at_k) == [1, 2, 4]  # k above the samples is not estimated
    p1 = result.pass_at_k[1]
    assert p1["value"] == pytest.approx((1 / 4 + 0 + 2 / 4) / 3, abs=1e-4)
    assert p1["lo"] <= p1["value"] <= p1["hi"]
    assert result.pass_at_k[4]["value"] == pytest.approx(2 / 3, abs=1e-4)
    # kept by the public tests: `fixes` keeps its first (passing) repair; in `forged` the first
    # full public pass is a tampered run, which is kept on the tie and is not a fix
    assert [result.best_of_k[k]["value"] for k in (1, 2, 4)] == pytest.approx([1 / 3] * 3, abs=1e-4)
    table = ceiling_table(result)
    assert table.startswith("3 of 4 tasks failed at turn 0; 4 sampled repairs each; 2 of them fixed by at least one")
    assert "| 4 | 0.667 [" in table and "| 0.333 [" in table


def test_cli_reads_the_home_store(cobalt_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problems = [add_problem(pid) for pid in ("fixes", "solved")]
    path = tmp_path / "problems.jsonl"
    path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in problems))
    assert main(["eval", "ceiling", "-b", str(path), "--json"]) == 1  # nothing stored yet: a one-line error
    s = Store(cobalt_home / "trajectories.db")
    for i in range(2):
        session(s, problems[0], [(0.0, 0.0), (1.0, 1.0) if i else (0.0, 0.0)], adapter_version="m-v1")
        session(s, problems[1], [(1.0, 1.0)], adapter_version="m-v1")
    s.close()
    capsys.readouterr()
    assert main(["eval", "ceiling", "-b", str(path), "--k", "1", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["tasks"], out["failed_tasks"], out["samples"], out["fixed_by_any"]) == (2, 1, 2, 1)
    assert out["pass_at_k"]["1"]["value"] == 0.5 and out["pass_at_k"]["2"]["value"] == 1.0
    assert out["best_of_k"]["1"]["value"] == 0.0 and out["best_of_k"]["2"]["value"] == 1.0
