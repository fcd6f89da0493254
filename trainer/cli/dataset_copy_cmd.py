"""The `cobalt dataset` actions that copy a built dataset into a new one with its rows rewritten:
`guide` (the train tasks' references as guides, `trainer.data.guides`), `rationalize` (those
guides in the served model's own words, `trainer.data.rationalize`) and `reword` (the feedback
turns in another wording, `trainer.data.reword`); and the options every such action shares."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from assistant.config_files import prompt_catalog
from assistant.console import add_action, add_json, print_result
from assistant.problems.natural import NATURAL_DIR
from assistant.runtime import open_client, open_sandbox
from trainer.cli.train_options import add_profile, progress
from trainer.data.build import load_tokenizer, prompt_tokens
from trainer.data.guides import add_guides, train_references
from trainer.data.mix import OWN, SYNTHETIC
from trainer.data.rationalize import Judge, check_inputs, rationalize
from trainer.data.reword import reword
from trainer.train_settings import load_train_settings
from trainer.training.reward import SandboxReward

if TYPE_CHECKING:
    from assistant.settings import Settings


def register_copies(actions: argparse._SubParsersAction) -> None:
    """Add `guide`, `rationalize` and `reword` to the `cobalt dataset` actions."""
    guide = dataset_action(
        actions,
        "guide",
        run_guide,
        "copy a built dataset with a guide per training row: its train task's reference as a served reply",
    )
    guide.add_argument(
        "--set",
        dest="sets",
        type=Path,
        action="append",
        default=None,
        help="a problem set with references (natural layout) whose train split gives references "
        "(repeatable; default: examples/natural); HumanEval's train split always does",
    )
    guide.add_argument(
        "--origin",
        dest="origins",
        choices=[OWN, SYNTHETIC],
        action="append",
        default=None,
        help="guide only the training rows of this mix part (repeatable; default: every row)",
    )
    why = dataset_action(
        actions,
        "rationalize",
        run_rationalize,
        "copy a guided dataset with each guide the served model's own reply given it as a hint, kept when it passes",
        "a built dataset with guides (`cobalt dataset guide`)",
    )
    why.add_argument("--model", help="the served model that writes the replies (default: config model.name)")
    why.add_argument("--adapter", default="base", help="its adapter (default: base, the bare model)")
    add_profile(why)
    words = dataset_action(
        actions,
        "reword",
        run_reword,
        "copy a built dataset with its feedback turns in another wording (configs/prompts.yaml)",
    )
    words.add_argument(
        "--wording",
        required=True,
        choices=sorted(prompt_catalog().feedback_wordings),
        help="the feedback wording of the copy (the served model's own: configs/prompts.yaml model_wordings)",
    )
    words.add_argument(
        "--model", help="the policy model whose tokenizer counts the prompts (default: config model.name)"
    )


def dataset_action(
    actions: argparse._SubParsersAction,
    name: str,
    func: Callable[[argparse.Namespace, Settings], int],
    help: str,
    dataset_help: str = "a built dataset",
) -> argparse.ArgumentParser:
    """The action `name` from a built DATASET to a new one (`writes_dataset`); returns its parser."""
    parser = add_action(actions, name, func, help)
    parser.add_argument("dataset", type=Path, help=dataset_help)
    writes_dataset(parser)
    return parser


def writes_dataset(parser: argparse.ArgumentParser) -> None:
    """`--out DIR` (required), the new dataset, and `--json` to print its meta.json."""
    parser.add_argument("--out", type=Path, required=True, help="the new dataset directory")
    add_json(parser, "print the written meta.json")


def run_guide(args: argparse.Namespace, config: Settings) -> int:
    """The dataset with guides from the train tasks' references (`trainer.data.guides`)."""
    references = train_references(args.sets or [NATURAL_DIR], config.eval.split)
    meta = add_guides(args.dataset, args.out, references, args.origins)
    counts = meta["guides"]
    return print_new_dataset(
        args,
        meta,
        f"{counts['guided']} of {counts['rows']} training rows have a guide ({counts['no_reference']} tasks "
        f"without a train-split reference, {counts['other_origin']} rows of another origin)",
    )


def run_rationalize(args: argparse.Namespace, config: Settings) -> int:
    """The guided dataset with each guide the served model's hinted reply (`trainer.data.rationalize`)."""
    settings = load_train_settings(config.train, args.profile)
    part = settings.dataset.rationalize
    model = args.model or config.model.name
    source = {"model": model, "adapter": args.adapter, "hint": part.hint, "leaks": part.leaks}
    check_inputs(args.dataset, args.out, source)
    client = open_client(config, model, adapter=args.adapter, progress=progress)
    sandbox = open_sandbox(config)
    try:
        reward = SandboxReward(sandbox, settings.reward, sanitize=config.loop.sanitize_answers)
        meta = rationalize(
            args.dataset,
            args.out,
            Judge(client, reward, part),
            concurrency=part.concurrency,
            source=source,
            progress=progress,
        )
    finally:
        sandbox.close()
    counts = meta["rationalize"]["counts"]
    return print_new_dataset(
        args,
        meta,
        f"{counts['kept']} of {counts['guided_in']} guides rewritten in the model's words ({counts['failed']} "
        f"replies failed a test, {counts['leaked']} spoke of the hint: those rows lost their guide)",
    )


def run_reword(args: argparse.Namespace, config: Settings) -> int:
    """The dataset with its feedback turns in `--wording` (`trainer.data.reword`); the tokenizer loads
    at the first prompt counted, after `reword` has checked its input, so a bad path errs at once."""
    tokenizer = functools.cache(lambda: load_tokenizer(args.model or config.model.name, config.paths))
    meta = reword(args.dataset, args.out, args.wording, lambda messages: prompt_tokens(tokenizer(), messages))
    counts, before = meta["reworded_from"]["counts"], meta["reworded_from"]["feedback_wording"]
    return print_new_dataset(
        args,
        meta,
        f"{counts['messages_reworded']} feedback turns of {counts['rows_reworded']} of {counts['rows']} rows "
        f"reworded from {before!r} to {args.wording!r}",
    )


def print_new_dataset(args: argparse.Namespace, meta: dict[str, Any], kept: str) -> int:
    """The new dataset's meta.json (--json), or `kept` (what it holds), where it was written and its data hash."""
    return print_result(args.json, meta, lambda m: f"{kept}; wrote {args.out} (data hash {m['data_hash'][:12]})")
