"""`cobalt retrain`: the nightly job (see `trainer.release.nightly`). Prints progress to stderr and
the report (or, with --json, one JSON object) to stdout."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from trainer.cli.train_options import add_profile, progress
from trainer.release.nightly import Retrain
from trainer.train_settings import load_train_settings

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("retrain", help="nightly: dataset -> GRPO -> gate -> promote -> hot-load")
    p.add_argument("--model", help="base model (default: config model.name)")
    p.add_argument("--server", metavar="URL", help="api base of a running server (default: the data dir's server)")
    p.add_argument("--fresh", action="store_true", help="abandon an unfinished run instead of resuming it")
    p.add_argument("--max-steps", type=int, help="override grpo.max_steps")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_profile(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, config: Settings) -> int:
    settings = load_train_settings(config.train, args.profile)
    job = Retrain(
        config,
        settings,
        model=args.model,
        api_base=args.server,
        progress=progress,
        max_steps=args.max_steps,
        config_file=getattr(args, "config", None),
    )
    result = job.run(fresh=args.fresh)
    report = result.steps.get("report") or {}
    if args.json:
        print(
            json.dumps(
                {
                    "run": result.id,
                    "status": result.status,
                    "error": result.error,
                    "report": report,
                    "steps": result.steps,
                },
                default=str,
            )
        )
    elif report.get("markdown"):
        print(Path(report["markdown"]).read_text(), end="")
    elif result.error:
        print(f"retrain run {result.id} {result.status}: {result.error}", file=sys.stderr)
    return 0 if result.status in ("done", "skipped") else 1  # a cron job sees a run that must resume
