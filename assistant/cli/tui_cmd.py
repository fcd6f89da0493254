"""`cobalt` and `cobalt tui [PROBLEM]`: open the Textual TUI, optionally on a problem
(FILE, FILE#ID or HumanEval/N). The model server and the sandbox are opened by the app in
the background; a bad problem, a missing server or Docker show inside the app as
notifications, so this command only fails when no terminal is attached (then `cobalt`
alone prints the help instead)."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.console import positive_int
from assistant.errors import UserError

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("tui", help="open the terminal UI (also what `cobalt` alone does)")
    parser.add_argument("problem", metavar="PROBLEM", nargs="?", help="a problem file (FILE or FILE#ID) or HumanEval/N")
    parser.add_argument("--model", help="model name or litellm id (default: config model.name)")
    parser.add_argument("--turns", type=positive_int, help="most model turns per run (default: config loop.turns)")
    parser.add_argument("--debug", metavar="FILE", help="debug a file of your project (with --test)")
    parser.add_argument("--test", metavar="CMD", help='with --debug: the test command, e.g. "python -m pytest -q"')
    parser.add_argument("--project", help="with --debug: the project root (default: found from FILE)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    debug = getattr(args, "debug", None)
    if debug and not (getattr(args, "test", None) or "").strip():
        raise UserError('--debug needs the test command: --test "python -m pytest -q"')
    if not _terminal():
        raise UserError("the TUI needs a terminal; use `cobalt solve PROBLEM` for a headless run")
    from assistant.tui import CobaltApp, Services

    services = Services(settings, getattr(args, "model", None))
    loop = settings.loop.with_turns(getattr(args, "turns", None))
    project = Path(args.project).resolve() if getattr(args, "project", None) else None
    target = (Path(debug).resolve(), args.test, project) if debug else None
    app = CobaltApp(services, loop, problem=getattr(args, "problem", None), debug=target)
    # SIGTERM/SIGHUP (a closed terminal, `timeout`): stop the loop as ctrl+c in the app does
    previous = {
        sig: signal.signal(sig, lambda *_: app.call_later(app.stop_and_exit)) for sig in (signal.SIGTERM, signal.SIGHUP)
    }
    try:
        code = app.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        try:
            services.close()
        except Exception as exc:  # the session is stored already; do not end on a traceback
            print(f"cobalt: warning: could not close the sandbox cleanly: {exc}", file=sys.stderr)
    return int(code or 0)


def run_default(args: argparse.Namespace, settings: Settings, parser: argparse.ArgumentParser) -> int:
    """`cobalt` with no command: the TUI with no problem open (`parser`'s help text when no
    terminal is attached, e.g. `cobalt | less`)."""
    if not _terminal():
        parser.print_help()
        return 0
    return run(args, settings)


def _terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()
