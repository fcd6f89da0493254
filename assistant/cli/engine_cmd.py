"""`cobalt engine build|status`: llama.cpp's server built for this CPU (the CPU serving engine)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from assistant.console import action_parsers, add_action
from assistant.serving import llama_build, llama_server

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    actions = action_parsers(sub, "engine", "build or show the llama.cpp serving engine")
    build = add_action(actions, "build", _build, "build llama-server and llama-bench for this CPU (cached)")
    build.add_argument("--force", action="store_true", help="build again even if built")
    status = add_action(actions, "status", _status, "the engine this machine serves with and its build")
    status.add_argument("--json", action="store_true")


def _build(args: argparse.Namespace, settings: Settings) -> int:
    llama_build.build(settings.paths.cache_dir, force=args.force)
    return 0


def _status(args: argparse.Namespace, settings: Settings) -> int:
    variant = llama_build.choose_variant(llama_build.cpu_flags())
    folder = llama_build.installed(settings.paths.cache_dir)
    row = {
        "engine": llama_server.engine(settings.server),
        "configured": settings.server.engine,
        "llama_cpp_version": llama_build.SDIST_VERSION,
        "cpu_variant": variant.name,
        "built": str(folder) if folder else None,
    }
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        for key, value in row.items():
            print(f"{key:<18} {value}")
    return 0
