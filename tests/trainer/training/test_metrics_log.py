"""The training log: each step's row in metrics.jsonl and its progress line, with the time left."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from trainer.training.metrics_log import MetricsLog, read_metrics


def _log(tmp_path: Path) -> tuple[MetricsLog, list[str]]:
    lines: list[str] = []
    reward = SimpleNamespace(totals={"faults_dropped": 0})
    return MetricsLog(tmp_path / "metrics.jsonl", reward, lines.append), lines  # type: ignore[arg-type]


def _step(log: MetricsLog, step: int, seconds: float, max_steps: int = 48) -> None:
    state = SimpleNamespace(global_step=step, max_steps=max_steps)
    log.record(state, {"reward": 0.25, "reward_std": 0.5, "time/step_s": seconds, "time/generate_s": seconds / 2})


def test_each_step_is_a_row_and_a_line_with_the_time_left_at_this_pace(tmp_path: Path) -> None:
    log, lines = _log(tmp_path)
    _step(log, 11, 500.0)  # a resumed run: steps 1-10 ran in another process
    _step(log, 12, 400.0)
    assert [r["step"] for r in read_metrics(tmp_path)] == [11, 12]
    assert lines[0].startswith("step 11/48 · reward +0.250")
    assert lines[0].endswith("about 5 h 8 min left")  # 37 steps x 500 s
    assert lines[1].endswith("about 4 h 30 min left")  # 36 steps x 450 s, the mean of this process's two


def test_no_time_left_after_the_last_step_and_minutes_below_an_hour(tmp_path: Path) -> None:
    log, lines = _log(tmp_path)
    _step(log, 2, 20.0, max_steps=3)
    _step(log, 3, 20.0, max_steps=3)
    assert lines[0].endswith("about 1 min left")
    assert "left" not in lines[1]


def test_the_summary_line_at_the_end_is_not_a_step(tmp_path: Path) -> None:
    log, lines = _log(tmp_path)
    log.record(SimpleNamespace(global_step=3, max_steps=3), {"train_runtime": 60.0})
    assert lines == [] and read_metrics(tmp_path) == []


def test_a_resumed_run_logs_steps_again_and_each_step_reads_as_its_latest_row(tmp_path: Path) -> None:
    first, _ = _log(tmp_path)
    for step in (1, 2, 3):
        _step(first, step, 100.0)
    again, _ = _log(tmp_path)  # resumed from checkpoint-1: steps 2 and 3 run again
    for step in (2, 3, 4):
        _step(again, step, 200.0)
    rows = read_metrics(tmp_path)
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    assert [r["time/step_s"] for r in rows] == [100.0, 200.0, 200.0, 200.0]
    assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == 6  # the raw history is kept


def test_a_line_torn_by_a_crash_is_skipped_and_the_next_row_starts_a_line_of_its_own(tmp_path: Path) -> None:
    log, _ = _log(tmp_path)
    _step(log, 1, 100.0)
    with open(tmp_path / "metrics.jsonl", "a") as fh:
        fh.write('{"step": 2, "max_st')  # the crash
    resumed, _ = _log(tmp_path)
    _step(resumed, 2, 300.0)
    assert [(r["step"], r["time/step_s"]) for r in read_metrics(tmp_path)] == [(1, 100.0), (2, 300.0)]
