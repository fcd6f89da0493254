"""Shared plumbing of the loop commands (solve, debug, collect): a live printer of session
events and the --json object of a session (the sandbox, client and store come from
`assistant.runtime`; argument types and progress bars from `assistant.console`).

Commands validate everything a user typed (problem, model, sandbox) before they open the
store, so bad input exits with one sentence and leaves the store untouched.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, TextIO

from assistant.debug.edit_search import SearchFinished, SearchStarted
from assistant.loop.session import ProgramExtracted, TokenStreamed, TurnFinished, TurnStarted
from assistant.serving.chat import figures


def _passed(result: Any, fallback_total: int) -> str:
    if result is None:
        return f"0/{fallback_total}"
    return f"{sum(t.passed for t in result.tests)}/{len(result.tests)}"


@dataclass
class TurnPrinter:
    """Prints one line per turn as it happens and streams each reply; with `quiet`, a live
    line (tokens, tok/s, elapsed) replaces the reply (on a terminal only); with `verbose`,
    each turn's feedback is shown too. `headers=False` prints the live line only (for
    --json runs, on stderr)."""

    turns: int
    public_total: int
    hidden_total: int
    verbose: bool = False
    out: TextIO | None = None
    quiet: bool = False
    headers: bool = True

    def __post_init__(self) -> None:
        from rich.console import Console

        self.console = Console(file=self.out or sys.stdout, highlight=False, soft_wrap=True)
        self.live = self.quiet and self.console.file.isatty()
        self._chunks, self._clock, self._painted = 0, 0.0, 0.0

    def _live(self, final: bool = False) -> None:
        now = time.monotonic()
        if not self.live or (not final and now - self._painted < 0.25):
            return
        self._painted = now
        line = f"  {figures(self._chunks, now - self._clock)}"
        self.console.file.write("\r\x1b[2K" + ("" if final else line))
        self.console.file.flush()

    def __call__(self, event: Any) -> None:
        c = self.console
        if isinstance(event, TurnStarted):
            self._chunks, self._clock = 0, time.monotonic()
        if isinstance(event, TokenStreamed):
            self._chunks += 1
            if self.quiet:
                self._live()
            else:
                c.file.write(event.text)
                c.file.flush()
            return
        if isinstance(event, ProgramExtracted):
            self._live(final=True)
        if not self.headers:
            return
        if isinstance(event, (SearchStarted, SearchFinished)):
            self._search(event)
        elif isinstance(event, TurnStarted):
            label = f"turn {event.index + 1}/{self.turns}"
            if event.author == "search":
                c.print(f"[bold]{label}[/]: the small edit found, run once more ...")
            elif event.author == "human":
                c.print(f"[bold]{label}[/]: running your program ...")
            elif event.attempt:
                c.print(
                    f"[bold]{label}[/]: the program repeats an earlier turn; resampling "
                    f"at temperature {event.temperature:g} ({event.attempt})"
                )
            else:
                c.print(f"[bold]{label}[/]: generating (temperature {event.temperature:g}) ...")
        elif isinstance(event, ProgramExtracted):
            if not self.quiet and self._chunks:
                c.file.write("\n")
            if event.program is None:
                c.print("  no ```python block in the reply")
        elif isinstance(event, TurnFinished):
            self._finished(event)

    def _search(self, event: SearchStarted | SearchFinished) -> None:
        if isinstance(event, SearchStarted):
            names = ", ".join(f"`{n}`" for n in event.functions) or "nothing"
            self.console.print(
                f"[bold]search[/]: small edits of {names} ({event.lines} lines), each run with the tests ..."
            )
        elif event.found:
            self.console.print(
                f"  [green]every test passes[/] after {event.tried} edits ({event.seconds:.1f} s): {event.found}"
            )
        else:
            self.console.print(
                f"  none of {event.tried} small edits passes every test ({event.seconds:.1f} s); asking the model"
            )

    def _finished(self, event: TurnFinished) -> None:
        turn = event.turn
        colour = "green" if turn.passed_public else ("yellow" if turn.program else "red")
        extra = f" · resampled {turn.resamples}x" if turn.resamples else ""
        extra += " · still repeats" if turn.repeated else ""
        self.console.print(
            f"  [{colour}]{turn.status}[/]: public {_passed(turn.public, self.public_total)}"
            f" · hidden {_passed(turn.hidden, self.hidden_total)}"
            f" · {turn.tokens} tokens · {turn.latency_s:.1f} s{extra}"
        )
        if self.verbose and not turn.passed_public:
            self.console.print(f"[dim]{turn.feedback}[/]", markup=True)


def printer(args: argparse.Namespace, turns: int, public_total: int, hidden_total: int) -> TurnPrinter | None:
    """The live output of a loop command: the streamed reply (or, with --quiet, a live line)
    on stdout; with --json only the live line, on stderr when that is a terminal."""
    if args.json:
        return (
            TurnPrinter(turns, public_total, hidden_total, out=sys.stderr, quiet=True, headers=False)
            if sys.stderr.isatty()
            else None
        )
    return TurnPrinter(turns, public_total, hidden_total, verbose=args.verbose, quiet=args.quiet)


def add_output_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of live output")
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="a live line (tokens, tok/s, elapsed) instead of the streamed reply"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="also show each turn's feedback")


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a `timeout`, a closed terminal, `systemctl stop`) raises KeyboardInterrupt in
    the main thread, as Ctrl-C does, so a running session ends as `interrupted` and every
    `finally` runs (a private model server is stopped). Outside the main thread: nothing."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def session_json(session: Any) -> dict[str, Any]:
    """The --json object of a finished session."""
    last = session.turns[-1] if session.turns else None
    return {
        "session_id": session.id if session.turns else None,
        "problem_id": session.problem.id,
        "model": getattr(session.client, "display_name", None),
        "status": session.status,
        "error": session.error,
        "turns": [t.summary() for t in session.turns],
        "program": last.program if last else None,
    }
