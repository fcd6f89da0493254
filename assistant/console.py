"""Terminal helpers shared by every command module, the assistant's own and the trainer's
(which plug into `cobalt` through entry points and so must not import `assistant.cli`):
an argparse type for counts, the shared parts of their parsers (`--json` among them), the
printing of a result as JSON or text, and a progress bar over many sessions.

It parses nothing and opens nothing; the commands do.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator


def to_stderr(message: str) -> None:
    """Progress for commands: stderr, so stdout stays clean for --json."""
    print(message, file=sys.stderr, flush=True)


def port_number(text: str) -> int:
    """A TCP port (1-65535) given on the command line."""
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1-65535)")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def seconds(text: str) -> float:
    """A number of seconds, 0 or more (argparse's `type`: bad input is one sentence)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more")
    return value


def action_parsers(sub: argparse._SubParsersAction, name: str, help: str) -> argparse._SubParsersAction:
    """Add the command `name` whose first argument is a required ACTION; returns its subparsers."""
    return sub.add_parser(name, help=help).add_subparsers(dest="action", metavar="ACTION", required=True)


def add_action(
    actions: argparse._SubParsersAction, name: str, func: Callable[..., int], help: str
) -> argparse.ArgumentParser:
    """Add the action `name`, run by `func(args, settings)`; returns its parser for the arguments."""
    parser = actions.add_parser(name, help=help)
    parser.set_defaults(func=func)
    return parser


def add_json(parser: argparse.ArgumentParser, help: str = "print one JSON object") -> None:
    """`--json`: the command prints its result as JSON (`print_result`) instead of text."""
    parser.add_argument("--json", action="store_true", help=help)


def print_result(
    as_json: bool, data: Any, describe: Callable[[Any], str], default: Callable[[Any], Any] | None = None
) -> int:
    """Print `data` as one JSON object (`default` as in `json.dumps`) or, without --json,
    the text `describe(data)`; returns the command's exit code, 0."""
    print(json.dumps(data, default=default) if as_json else describe(data))
    return 0


def add_concurrency(parser: argparse.ArgumentParser, default: str) -> None:
    """`--concurrency/-c N`: sessions in flight at once (`default` says where the default comes from)."""
    parser.add_argument(
        "--concurrency", "-c", type=positive_int, help=f"sessions in flight at once (default: {default})"
    )


@contextmanager
def session_progress(
    label: str, disable: bool = False
) -> Iterator[tuple[Callable[[int, int], None], Callable[[Any], None]]]:
    """A rich progress bar for many sessions; yields the (on_plan, on_session) callbacks
    that `assistant.loop.collect.collect` takes."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    counts: dict[str, int] = {}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),  # progress, never the result: `--json` keeps stdout one JSON object
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
