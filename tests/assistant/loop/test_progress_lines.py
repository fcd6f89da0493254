"""Plain progress lines over many sessions: the plan, every tenth done, the time the rest takes."""

from __future__ import annotations

from assistant.loop.progress_lines import ProgressLines, about


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_line_at_the_plan_and_at_each_tenth_with_the_time_left_at_the_pace_so_far() -> None:
    said: list[str] = []
    clock = Clock()
    lines = ProgressLines("gate: base natural", said.append, clock=clock)
    lines.on_plan(40, 8)
    for _ in range(40):
        clock.now += 30.0  # 30 s a session
        lines.on_session()
    assert said[0] == "gate: base natural: 40 session(s) to run (8 already stored)"
    assert said[1:3] == [
        "gate: base natural: 4/40 sessions · about 18 min left",
        "gate: base natural: 8/40 sessions · about 16 min left",
    ]
    assert len(said) == 11 and said[-1] == "gate: base natural: 40/40 sessions"


def test_few_sessions_each_get_a_line_and_nothing_is_said_without_a_plan() -> None:
    said: list[str] = []
    lines = ProgressLines("x", said.append, clock=Clock())
    lines.on_session()  # collect calls on_plan first; a stray call says nothing
    lines.on_plan(3, 0)
    for _ in range(3):
        lines.on_session()
    assert said == [
        "x: 3 session(s) to run",
        "x: 1/3 sessions · about 1 min left",
        "x: 2/3 sessions · about 1 min left",
        "x: 3/3 sessions",
    ]


def test_about_rounds_to_whole_minutes() -> None:
    assert (about(0), about(89), about(3600), about(7530)) == (
        "about 1 min",
        "about 1 min",
        "about 1 h 0 min",
        "about 2 h 6 min",
    )
