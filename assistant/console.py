"""Terminal helpers shared by every command module, the assistant's own and the trainer's
(which plug into `cobalt` through entry points and so must not import `assistant.cli`):
an argparse type for counts and a progress bar over many sessions.

It parses nothing and opens nothing; the commands do.
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from typing import Any, Callable, Iterator


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


@contextmanager
def session_progress(
    label: str, disable: bool = False
) -> Iterator[tuple[Callable[[int, int], None], Callable[[Any], None]]]:
    """A rich progress bar for many sessions; yields the (on_plan, on_session) callbacks
    that `assistant.loop.collect.collect` takes."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    counts: dict[str, int] = {}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        disable=disable,
    ) as bar:
        task = bar.add_task(label, total=None, status="")

        def on_plan(todo: int, stored: int) -> None:
            bar.update(task, total=todo)
            if stored:
                bar.console.print(f"{stored} session(s) already stored; {todo} to run")

        def on_session(session: Any) -> None:
            counts[session.status] = counts.get(session.status, 0) + 1
            bar.update(task, advance=1, status=" ".join(f"{k} {v}" for k, v in sorted(counts.items())))

        yield on_plan, on_session
