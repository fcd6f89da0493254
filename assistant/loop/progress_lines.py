"""Progress of a run of many sessions as plain lines, for jobs whose output goes to a log (the
gate, the nightly job) where a live bar is lost: the sessions to run, then the count done at
every tenth of them with the time the rest will take at the run's pace so far."""

from __future__ import annotations

import time
from typing import Any, Callable


def about(seconds: float) -> str:
    """'about 2 h 5 min' (whole minutes, at least one)."""
    hours, minutes = divmod(max(1, round(seconds / 60)), 60)
    return f"about {hours} h {minutes} min" if hours else f"about {minutes} min"


class ProgressLines:
    """The (on_plan, on_session) callbacks `assistant.loop.collect.collect` takes, saying lines
    labelled `label` through `say`: one at the plan, one at each `parts`-th of the sessions done."""

    def __init__(
        self, label: str, say: Callable[[str], None], parts: int = 10, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.label, self.say, self.parts, self.clock = label, say, parts, clock
        self.todo = self.done = 0
        self.started = 0.0  # set by on_plan

    def on_plan(self, todo: int, stored: int) -> None:
        self.todo, self.done, self.started = todo, 0, self.clock()
        already = f" ({stored} already stored)" if stored else ""
        self.say(f"{self.label}: {todo} session(s) to run{already}")

    def on_session(self, session: Any = None) -> None:
        """Called by `collect` from its own thread, one session at a time."""
        self.done += 1
        done, todo = self.done, self.todo
        if not todo or done > todo or done * self.parts // todo == (done - 1) * self.parts // todo:
            return
        left = (todo - done) * (self.clock() - self.started) / done
        self.say(f"{self.label}: {done}/{todo} sessions" + (f" · {about(left)} left" if done < todo else ""))
