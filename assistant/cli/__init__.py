"""The `cobalt` command line: one argparse parser, one module per command group.

The assistant's command modules are imported here by name; other packages add commands
through the `cobalt.commands` entry-point group (the trainer's are declared in
pyproject.toml), so this package imports nothing above it. Each command module exposes
`register(subparsers)`, which adds its parser(s) and sets `func(args, settings) -> int`
(settings: `assistant.settings.Settings`, loaded once here by `assistant.settings_loader.load_settings`).
Errors that a user can fix (`assistant.errors.user_error_types`) are printed as one
sentence with exit code 1; no bare tracebacks reach the terminal unless COBALT_DEBUG=1.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib.metadata import entry_points
from typing import Any, Callable

from assistant.cli import (
    collect_cmd,
    debug_cmd,
    engine_cmd,
    models_cmd,
    sandbox_cmd,
    serve_cmd,
    solve_cmd,
    trajectories_cmd,
    tui_cmd,
)
from assistant.cli.loop_output import sigterm_as_interrupt
from assistant.errors import UserError, user_error_types
from assistant.settings_loader import load_settings

COMMAND_GROUP = "cobalt.commands"
Register = Callable[[argparse._SubParsersAction], None]
ASSISTANT_COMMANDS: list[Register] = [
    models_cmd.register,
    engine_cmd.register,
    serve_cmd.register,
    sandbox_cmd.register,
    solve_cmd.register,
    debug_cmd.register,
    trajectories_cmd.register,
    collect_cmd.register,
    tui_cmd.register,
]


def plugin_commands() -> list[Register]:
    """The `register` functions of the installed `cobalt.commands` entry points."""
    return [point.load() for point in entry_points(group=COMMAND_GROUP)]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cobalt", description="A self-improving coding assistant.")
    parser.add_argument("--config", help="YAML file deep-merged over configs/default.yaml")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in [*ASSISTANT_COMMANDS, *plugin_commands()]:
        register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace, Any], int] | None = getattr(args, "func", None)
    try:
        settings = load_settings(args.config)
        if func is None:
            if getattr(args, "command", None) is None:
                return tui_cmd.run_default(args, settings, parser)
            parser.print_help()
            return 0
        with sigterm_as_interrupt():  # every command: a `finally` stops what it started
            code = int(func(args, settings) or 0)
        sys.stdout.flush()  # a reader gone shows here, not in the interpreter's exit
        return code
    except KeyboardInterrupt:
        print("cobalt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader left (`cobalt trajectories export | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 141
    except user_error_types() as exc:
        if os.environ.get("COBALT_DEBUG"):
            raise
        print(f"cobalt: error: {exc}", file=sys.stderr)
        return 1


__all__ = ["main", "build_parser", "UserError"]
