"""The `cobalt` command line: one argparse parser, one module per command group.

Each module in `COMMAND_MODULES` exposes `register(subparsers)`, which adds its parser(s)
and sets `func(args, settings) -> int` (settings: `assistant.settings.Settings`, loaded once
here by `assistant.config.load_settings`). Errors that a user can fix are raised as `UserError`
(or any exception listed in `USER_ERRORS`) and printed as one sentence with exit code 1;
no bare tracebacks reach the terminal unless COBALT_DEBUG=1.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any, Callable

from assistant.cli.errors import UserError, user_error_types

COMMAND_MODULES = [
    "assistant.cli.models_cmd",
    "assistant.cli.serve_cmd",
    "assistant.cli.sandbox_cmd",
    "assistant.cli.bench_cmd",
    "assistant.cli.solve_cmd",
    "assistant.cli.debug_cmd",
    "assistant.cli.trajectories_cmd",
    "assistant.cli.collect_cmd",
    "assistant.cli.tui_cmd",
    "trainer.cli.eval_cmd",
    "trainer.cli.dataset_cmd",
    "trainer.cli.train_cmd",
    "trainer.cli.retrain_cmd",
    "trainer.cli.adapters_cmd",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cobalt", description="A self-improving coding assistant.")
    parser.add_argument("--config", help="YAML file deep-merged over configs/default.yaml")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # a command group not written yet
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace, Any], int] | None = getattr(args, "func", None)
    try:
        from assistant.config import load_settings

        settings = load_settings(args.config)
        if func is None:
            tui = getattr(args, "command", None) is None and _tui_entry()
            if tui:
                return tui(args, settings)
            parser.print_help()
            return 0
        return int(func(args, settings) or 0)
    except KeyboardInterrupt:
        print("cobalt: interrupted", file=sys.stderr)
        return 130
    except user_error_types() as exc:
        if os.environ.get("COBALT_DEBUG"):
            raise
        print(f"cobalt: error: {exc}", file=sys.stderr)
        return 1


def _tui_entry() -> Callable[[argparse.Namespace, Any], int] | None:
    try:
        module = importlib.import_module("assistant.cli.tui_cmd")
    except ModuleNotFoundError:
        return None
    return module.run_default


__all__ = ["main", "build_parser", "UserError"]
