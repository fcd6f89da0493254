"""The nightly window takes each session once, when it has finished: one still running when a run
starts is left for the window it ends in (taken while running, its later turns were lost for good)."""

from __future__ import annotations

from pathlib import Path

from assistant.store.trajectory import PASSED, UNSOLVED
from assistant.store.trajectory_db import Store
from tests.assistant.sample_problems import add_problem
from trainer.data.session_source import sessions_from_store


def test_a_window_holds_the_sessions_that_ended_in_it_and_none_still_running(tmp_path: Path) -> None:
    store = Store(tmp_path / "t.db")
    problem = add_problem()
    early = store.start_session(problem, "m", "collect", started_at=100.0)
    store.set_status(early, UNSOLVED, ended_at=150.0)
    spans = store.start_session(problem, "m", "collect", started_at=150.0)  # started in window 1, ended in 2
    store.set_status(spans, PASSED, ended_at=250.0)
    running = store.start_session(problem, "m", "collect", started_at=180.0)  # still running

    def window(since: float, until: float) -> set[str]:
        return {s.id for s in sessions_from_store(store, since=since, until=until)}

    assert window(0.0, 200.0) == {early}
    assert window(200.0, 300.0) == {spans}  # started before 200: the old rule lost it in both windows
    assert running not in window(0.0, 1e12) and running in {s.id for s in sessions_from_store(store)}
    store.close()
