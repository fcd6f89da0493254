"""Shared plumbing of the loop commands (solve, debug, collect): a live printer of session
events and the --json object of a session (the sandbox, client and store come from
`assistant.runtime`; argument types and progress bars from `assistant.console`).

Commands validate everything a user typed (problem, model, sandbox) before they open the
store, so bad input exits with one sentence and leaves the store untouched.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from assistant.session import ProgramExtracted, TokenStreamed, TurnFinished, TurnStarted


def _passed(result: Any, fallback_total: int) -> str:
    if result is None:
        return f"0/{fallback_total}"
    return f"{sum(t.passed for t in result.tests)}/{len(result.tests)}"


class TurnPrinter:
    """Prints one line per turn as it happens; with `verbose`, streams the reply and shows
    each turn's feedback."""

    def __init__(self, turns: int, public_total: int, hidden_total: int, verbose: bool = False,
                 out: TextIO | None = None) -> None:
        from rich.console import Console

        self.turns, self.public_total, self.hidden_total = turns, public_total, hidden_total
        self.verbose = verbose
        self.console = Console(file=out or sys.stdout, highlight=False, soft_wrap=True)

    def __call__(self, event: Any) -> None:
        c = self.console
        if isinstance(event, TurnStarted):
            label = f"turn {event.index + 1}/{self.turns}"
            if event.author == "human":
                c.print(f"[bold]{label}[/]: running your program ...")
            elif event.attempt:
                c.print(f"[bold]{label}[/]: the program repeats an earlier turn; resampling "
                        f"at temperature {event.temperature:g} ({event.attempt})")
            else:
                c.print(f"[bold]{label}[/]: generating (temperature {event.temperature:g}) ...")
        elif isinstance(event, TokenStreamed) and self.verbose:
            c.file.write(event.text)
            c.file.flush()
        elif isinstance(event, ProgramExtracted):
            if self.verbose:
                c.file.write("\n")
            if event.program is None:
                c.print("  no ```python block in the reply")
        elif isinstance(event, TurnFinished):
            self._finished(event)

    def _finished(self, event: TurnFinished) -> None:
        turn = event.turn
        colour = "green" if turn.passed_public else ("yellow" if turn.program else "red")
        extra = f" · resampled {turn.resamples}x" if turn.resamples else ""
        extra += " · still repeats" if turn.repeated else ""
        self.console.print(
            f"  [{colour}]{turn.status}[/]: public {_passed(turn.public, self.public_total)}"
            f" · hidden {_passed(turn.hidden, self.hidden_total)}"
            f" · {turn.tokens} tokens · {turn.latency_s:.1f} s{extra}")
        if self.verbose and not turn.passed_public:
            self.console.print(f"[dim]{turn.feedback}[/]", markup=True)


def session_json(session: Any) -> dict[str, Any]:
    """The --json object of a finished session."""
    last = session.turns[-1] if session.turns else None
    return {"session_id": session.id if session.turns else None, "problem_id": session.problem.id,
            "model": getattr(session.client, "display_name", None), "status": session.status,
            "error": session.error, "turns": [t.summary() for t in session.turns],
            "program": last.program if last else None}
