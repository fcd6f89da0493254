"""`cobalt train`: LoRA GRPO on a built dataset (resuming from the output directory's last
checkpoint), optionally registering the adapter. A published recipe runs to a fixed step
count with a seed and no wall-clock stop: `--max-steps N --seed S --no-budget`. With `launcher.num_processes` > 1 in
configs/train.yaml it re-runs itself as that many ranks under `accelerate launch`
(trainer/training/launcher.py); only rank 0 registers and prints."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.console import add_json
from assistant.errors import UserError
from assistant.runtime import open_sandbox
from trainer.cli.train_options import add_profile, is_main_process, progress
from trainer.release.registry import Registry
from trainer.train_settings import load_train_settings
from trainer.training import grpo, launcher

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train a LoRA adapter with GRPO on a bandit dataset")
    p.add_argument("--dataset", type=Path, required=True, help="a directory written by `cobalt dataset build`")
    p.add_argument("--out", type=Path, help="training directory (default: <data>/training/<dataset name>)")
    p.add_argument("--model", help="base model (default: config model.name)")
    p.add_argument("--parent", help="adapter version to continue from, `current`, or `none` (default: none)")
    p.add_argument("--max-steps", type=int, help="override grpo.max_steps")
    p.add_argument("--seed", type=int, help="override grpo.seed (recorded in the adapter's metadata)")
    p.add_argument(
        "--no-budget", action="store_true", help="ignore train.max_minutes: run to the step count (a recipe)"
    )
    p.add_argument("--register", action="store_true", help="register the trained adapter as a new version")
    add_json(p)
    add_profile(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, config: Settings) -> int:
    if not (args.dataset / "train.jsonl").is_file():
        raise UserError(
            f"{args.dataset} is not a dataset directory (no train.jsonl); build one with `cobalt dataset build`"
        )
    try:
        data_hash = json.loads((args.dataset / "meta.json").read_text()).get("data_hash")
    except (OSError, ValueError, AttributeError):
        data_hash = None
    if not data_hash:  # the run is named by it: found missing only after the whole run otherwise
        raise UserError(f"{args.dataset} has no meta.json with its data_hash; build it with `cobalt dataset build`")
    settings = load_train_settings(config.train, args.profile)
    if args.no_budget:
        settings = settings.model_copy(update={"max_minutes": 0.0})
    overrides: dict[str, Any] = {} if args.seed is None else {"seed": args.seed}
    model = args.model or config.model.name
    registry = Registry.open(config.paths)
    parent = None
    if args.parent == "current":
        parent = registry.current(model)
    elif args.parent not in (None, "none"):
        if not str(args.parent).lstrip("v").isdigit():
            raise UserError(f"--parent takes a version number, `current` or `none`, not {args.parent!r}")
        parent = registry.get(int(str(args.parent).lstrip("v")))
    out = args.out or config.paths.data_dir / "training" / args.dataset.resolve().name
    if launcher.wants_launch(settings.launcher):  # this process only starts and waits for the ranks
        ranks = launcher.train_args(
            dataset=args.dataset,
            out=out,
            model=model,
            profile=settings.profile,
            parent=args.parent,
            max_steps=args.max_steps,
            seed=args.seed,
            no_budget=args.no_budget,
            register=args.register,
            as_json=args.json,
            config=getattr(args, "config", None),
        )
        code = launcher.run(settings.launcher, ranks, progress)
        if code != 0:
            raise UserError(
                f"the training ranks under accelerate launch exited with code {code}; see their output above"
            )
        return 0
    sandbox = open_sandbox(config)  # one per rank
    try:
        result = grpo.train(
            settings,
            model=model,
            dataset=args.dataset,
            out=out,
            paths=config.paths,
            sandbox=sandbox,
            parent=parent,
            max_steps=args.max_steps,
            progress=progress,
            sanitize=config.loop.sanitize_answers,
            **overrides,
        )
    finally:
        sandbox.close()
    summary: dict[str, Any] = {
        "adapter": str(result.adapter),
        "metrics": result.meta["metrics"],
        "resumed_from": result.resumed_from,
    }
    if args.register and is_main_process():
        item = registry.from_training(result.meta) or registry.register(result.adapter, result.meta)
        summary["registered"] = {"version": item.version, "name": item.name}
    if not is_main_process():
        return 0
    if args.json:
        print(json.dumps(summary))
    else:
        m = result.meta["metrics"]
        print(
            f"trained {m['steps']} steps in {m['wall_s']} s; mean reward "
            f"{'n/a (no step logged)' if m['mean_reward'] is None else format(m['mean_reward'], '+.3f')}; "
            f"adapter at {result.adapter}"
        )
        if "registered" in summary:
            print(
                f"registered as v{summary['registered']['version']} ({summary['registered']['name']}); "
                "promote it with `cobalt adapters promote`"
            )
    return 0
