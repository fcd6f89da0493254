"""`cobalt dataset build`: stored sessions (or an imported JSONL export) -> the bandit
dataset files, printing how many items each filter kept and dropped."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.errors import UserError
from assistant.runtime import open_sandbox, open_store
from trainer.cli.common import add_profile, progress

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    dataset = sub.add_parser("dataset", help="build the bandit training dataset")
    actions = dataset.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = actions.add_parser("build", help="filter stored trajectories into partial-trajectory prompts")
    p.add_argument("--jsonl", type=Path, help="read sessions from this JSONL export instead of the store")
    p.add_argument("--out", type=Path, help="output directory (default: <data>/datasets/<time>)")
    p.add_argument("--model", help="policy model whose tokenizer measures prompts (default: config model.name)")
    p.add_argument("--since", type=float, help="only sessions started after this Unix time")
    p.add_argument("--tasks", help="only sessions on these problems (humaneval or a problem file/dir) ...")
    p.add_argument("--split", default="all", help="... in this split of them (all, train, val, test; see `cobalt eval`)")
    p.add_argument("--no-perturb", action="store_true", help="build no perturbed contexts (no sandbox needed)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_profile(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, config: Settings) -> int:
    from trainer import build
    from trainer.sessions import sessions_from_jsonl, sessions_from_store
    from trainer.settings import load_train_settings

    settings = load_train_settings(config.train, args.profile)
    model = args.model or config.model.name
    if args.jsonl is not None:
        if not args.jsonl.is_file():
            raise UserError(f"{args.jsonl}: no such JSONL file")
        sessions = sessions_from_jsonl(args.jsonl)
    else:
        with open_store(config) as store:
            sessions = sessions_from_store(store, sources=settings.dataset.sources, since=args.since)
    if args.tasks:
        from trainer.eval.evaluate import EvalSettings, load_benchmark

        wanted = {p.content_hash() for p in load_benchmark(args.tasks, args.split,
                                                                EvalSettings.from_section(config.eval))}
        sessions = [s for s in sessions if s.problem_hash in wanted]
    if not sessions:
        raise UserError("there are no stored sessions to build a dataset from; run `cobalt collect` or "
                        "`cobalt trajectories import` first")
    out = args.out or config.paths.data_dir / "datasets" / time.strftime("%Y%m%d-%H%M%S")
    tokenizer = build.load_tokenizer(model, config.paths)
    perturb = not args.no_perturb and settings.dataset.perturb_fraction > 0
    sandbox = open_sandbox(config) if perturb else None
    try:
        built = build.build(sessions, out, settings, tokenizer=tokenizer, sandbox=sandbox,
                            loop=config.loop, perturb=perturb, progress=progress)
    finally:
        if sandbox is not None:
            sandbox.close()
    if args.json:
        print(json.dumps(built.summary()))
        return 0
    width = max(len(k) for k in built.stats)
    for name, count in built.stats.items():
        print(f"{name:<{width}}  {count}")
    print(f"wrote {built.train_rows} training and {built.validation_rows} validation prompts to {out}")
    return 0
