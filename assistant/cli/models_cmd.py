"""`cobalt models prepare|list|import`: the embedded and test models in the cache."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from assistant.console import action_parsers, add_action
from assistant.serving import models

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    actions = action_parsers(sub, "models", "prepare, list or import models")
    prep = add_action(actions, "prepare", _prepare, "fetch, verify and convert built-in models")
    prep.add_argument("names", nargs="+", help="built-in model names (see configs/models.yaml)")
    prep.add_argument("--force", action="store_true", help="prepare again even if present")
    lst = add_action(actions, "list", _list, "list built-in and imported models")
    lst.add_argument("--json", action="store_true")
    imp = add_action(actions, "import", _import, "add a GGUF file or a checkpoint directory")
    imp.add_argument("source", help="FILE.gguf or a Hugging Face checkpoint directory")
    imp.add_argument("--name", required=True, help="the name to serve it under")


def _prepare(args: argparse.Namespace, settings: Settings) -> int:
    for name in args.names:
        models.prepare(name, settings.paths, force=args.force)
    return 0


def _list(args: argparse.Namespace, settings: Settings) -> int:
    rows = models.list_models(settings.paths)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        state = f"ready  {row['size_mb']:>8.1f} MB" if row.get("prepared") else "not prepared"
        print(f"{row['name']:<14} {state:<22} {row['description']}")
    return 0


def _import(args: argparse.Namespace, settings: Settings) -> int:
    models.import_model(args.source, args.name, settings.paths)
    return 0
