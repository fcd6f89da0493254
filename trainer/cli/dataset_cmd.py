"""`cobalt dataset build`: stored sessions (or an imported JSONL export) -> the bandit
dataset files, printing how many sessions each source gave and each filter kept and dropped.
`cobalt dataset combine`: several built datasets -> one (`trainer.data.combine`).
`cobalt dataset synthesize`: store the synthetic repair sessions of the train split
(`trainer.repair.curriculum`). `cobalt dataset pin-repair`: rebuild the pinned
`humaneval-repair` items in the sandbox (`trainer.repair.pins`). `cobalt dataset mutants`: a
`repair:FILE.jsonl` benchmark from a problem set with references (`trainer.repair.from_sources`).
`cobalt dataset feedback-needed`: the repair contexts a blind re-ask did not fix
(`trainer.data.feedback_needed`). `guide`, `rationalize` and `reword` copy a dataset with its
rows rewritten (`trainer.cli.dataset_copy_cmd`)."""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.console import action_parsers, add_action, add_json, print_result
from assistant.errors import UserError
from assistant.problems.splits import SPLITS
from assistant.runtime import open_sandbox, open_store
from trainer.cli.dataset_copy_cmd import dataset_action, print_new_dataset, register_copies, writes_dataset
from trainer.cli.train_options import add_profile, progress
from trainer.data import build
from trainer.data.combine import combine
from trainer.data.feedback_needed import select_feedback_needed, synthetic_items
from trainer.data.heldout import training_sessions
from trainer.data.session_source import sessions_from_jsonl, sessions_from_store
from trainer.eval.evaluate import load_benchmark
from trainer.repair.curriculum import SOURCE, synthesize, train_pairs
from trainer.repair.from_sources import reference_pairs, split_pairs
from trainer.repair.items import build_items, write_items
from trainer.repair.pins import PIN_FILE, pin_humaneval
from trainer.repair.repair_settings import repair_settings
from trainer.repair.served_form import RENDERS
from trainer.train_settings import load_train_settings

HELD_OUT = ("val", "test")  # splits `dataset build` refuses: what the gate and `cobalt eval` measure

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    actions = action_parsers(sub, "dataset", "build the bandit training dataset")
    p = add_action(actions, "build", run, "filter stored trajectories into partial-trajectory prompts")
    p.add_argument("--jsonl", type=Path, help="read sessions from this JSONL export instead of the store")
    p.add_argument("--out", type=Path, help="output directory (default: <data>/datasets/<time>)")
    p.add_argument("--model", help="policy model whose tokenizer measures prompts (default: config model.name)")
    p.add_argument(
        "--since", type=float, help="only sessions that ended after this Unix time (running ones are left out)"
    )
    p.add_argument("--tasks", help="only sessions on these problems (humaneval or a problem file/dir) ...")
    p.add_argument(
        "--split",
        default="train",
        help="train (default) leaves out the val and test splits (HumanEval's and the natural set's); "
        "all keeps them; val and test alone are refused (see `cobalt eval splits`)",
    )
    p.add_argument("--no-perturb", action="store_true", help="build no perturbed contexts (no sandbox needed)")
    add_json(p)
    add_profile(p)
    comb = add_action(
        actions, "combine", run_combine, "combine built datasets: seeded draws of training rows, every validation row"
    )
    comb.add_argument("datasets", type=Path, nargs="+", help="two or more dataset directories")
    writes_dataset(comb)
    comb.add_argument(
        "--take",
        help="training rows to draw from each dataset, comma-separated, `all` for every row (default: all of each)",
    )
    comb.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    syn = add_action(
        actions, "synthesize", run_synthesize, "store synthetic repair sessions (mutants of train-split tasks)"
    )
    syn.add_argument("--per-task", type=int, help="mutants per task (default: configs/repair.yaml curriculum.per_task)")
    syn.add_argument(
        "--render",
        choices=RENDERS,
        help="how the programs are written (default: configs/repair.yaml curriculum.render): served "
        "(no docstrings or comments, like the served model's replies) or canonical (the mutant as is)",
    )
    syn.add_argument(
        "--from",
        dest="from_dir",
        type=Path,
        help="mutate the train split of this set with references (natural layout, e.g. examples/natural) "
        "instead of HumanEval's",
    )
    add_json(syn)
    pin = add_action(
        actions,
        "pin-repair",
        run_pin,
        "rebuild the pinned humaneval-repair items in the sandbox (trainer/repair/humaneval_pins.json)",
    )
    add_json(pin)
    mut = add_action(
        actions,
        "mutants",
        run_mutants,
        "write a repair:FILE.jsonl benchmark: seeded mutants of a problem set's references that fail a public test",
    )
    mut.add_argument("set_dir", type=Path, help="a problem set with references: problems.jsonl and src/*.yaml")
    mut.add_argument("--out", type=Path, required=True, help="the repair item file to write (.jsonl)")
    mut.add_argument("--per-task", type=int, help="mutants kept per problem (default: repair.yaml mutate.per_task)")
    mut.add_argument(
        "--split",
        choices=SPLITS,
        default="all",
        help="only the problems of this split (the `eval:` split rule; the natural set's gate items are its val split)",
    )
    add_json(mut)
    need = dataset_action(
        actions,
        "feedback-needed",
        run_feedback_needed,
        "keep the synthetic repair contexts whose bug a blind re-ask (no feedback) left broken",
        "a built dataset of synthetic repair sessions",
    )
    need.add_argument(
        "--report", type=Path, required=True, help="a repair report (both arms) of the served model on those items"
    )
    register_copies(actions)


def run(args: argparse.Namespace, config: Settings) -> int:
    if args.split in HELD_OUT:
        raise UserError(
            f"a training dataset of the {args.split!r} split would train on what `cobalt eval` and the gate "
            "measure; use --split train, or --split all to keep every split knowingly"
        )
    settings = load_train_settings(config.train, args.profile)
    model = args.model or config.model.name
    if args.jsonl is not None:
        if not args.jsonl.is_file():
            raise UserError(f"{args.jsonl}: no such JSONL file")
        sessions = sessions_from_jsonl(args.jsonl)
    else:
        with open_store(config) as store:
            sessions = sessions_from_store(store, since=args.since)
    counts: Counter = Counter()
    sessions = training_sessions(
        sessions,
        settings.dataset.sources,
        "all" if args.tasks else args.split,  # --tasks picks its split itself, below
        config.eval.split,
        counts,
        keep_heldout_set=args.split == "all",  # examples/heldout/: only when asked for by --split all
    )
    if args.tasks:
        wanted = {p.content_hash() for p in load_benchmark(args.tasks, args.split, config.eval)}
        counts["left_out:not_in_tasks"] = sum(s.problem_hash not in wanted for s in sessions)
        sessions = [s for s in sessions if s.problem_hash in wanted]
    if not args.json:
        print("sessions: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if not sessions:
        raise UserError(
            "there are no stored sessions to build a dataset from; run `cobalt collect` or "
            "`cobalt trajectories import` first"
        )
    out = args.out or config.paths.data_dir / "datasets" / time.strftime("%Y%m%d-%H%M%S")
    tokenizer = build.load_tokenizer(model, config.paths)
    perturb = not args.no_perturb and settings.dataset.perturb_fraction > 0
    sandbox = open_sandbox(config) if perturb else None
    try:
        built = build.build(
            sessions,
            out,
            settings,
            tokenizer=tokenizer,
            sandbox=sandbox,
            loop=config.loop,
            model=model,
            perturb=perturb,
            progress=progress,
        )
    finally:
        if sandbox is not None:
            sandbox.close()
    return print_result(args.json, {**built.summary(), "sessions": dict(counts)}, lambda _: _built(built, out))


def _built(built: build.BuiltDataset, out: Path) -> str:
    """The text of `dataset build`: each filter's count, the prompts by origin, what was written."""
    width = max(len(k) for k in built.stats)
    lines = [f"{name:<{width}}  {count}" for name, count in built.stats.items()]
    rows = (built.mix or {}).get("rows", {})
    for split in ("train", "validation"):
        lines.append(
            f"{split} prompts by origin: " + (", ".join(f"{k} {v}" for k, v in rows.get(split, {}).items()) or "none")
        )
    lines.append(f"wrote {built.train_rows} training and {built.validation_rows} validation prompts to {out}")
    return "\n".join(lines)


def _takes(text: str | None, count: int) -> list[int | None]:
    if text is None:
        return [None] * count
    takes: list[int | None] = []
    for part in text.split(","):
        part = part.strip()
        if part != "all" and not part.isdigit():
            raise UserError(f"--take {text!r}: each count must be a whole number or `all`")
        takes.append(None if part == "all" else int(part))
    return takes


def run_combine(args: argparse.Namespace, config: Settings) -> int:
    meta = combine(args.datasets, args.out, _takes(args.take, len(args.datasets)), seed=args.seed)
    return print_result(args.json, meta, lambda m: _combined(m, args.out))


def run_synthesize(args: argparse.Namespace, config: Settings) -> int:
    repair = repair_settings()
    sources = None if args.from_dir is None else train_pairs(args.from_dir, config.eval.split)
    sandbox = open_sandbox(config)
    try:
        with open_store(config) as store:
            counts = synthesize(
                store,
                sandbox,
                config.loop,
                repair.curriculum_params(args.per_task),
                rule=config.eval.split,
                concurrency=repair.curriculum.concurrency,
                render=args.render or repair.curriculum.render,
                sources=sources,
                progress=progress,
            )
    finally:
        sandbox.close()
    return print_result(args.json, dict(counts), lambda c: ", ".join(f"{k} {v}" for k, v in c.items()))


def run_pin(args: argparse.Namespace, config: Settings) -> int:
    """Rebuild trainer/repair/humaneval_pins.json with configs/repair.yaml `mutate:` (the
    canonical solutions and every candidate mutant run in the sandbox)."""
    with open_sandbox(config) as box:
        found = pin_humaneval(box, repair_settings().mutate)
    count = sum(len(v) for v in found["tasks"].values())
    summary = {"items": count, "tasks": len(found["tasks"]), "file": str(PIN_FILE), "log": found["log"]}
    return print_result(args.json, summary, _pinned)


def run_mutants(args: argparse.Namespace, config: Settings) -> int:
    """Mutants of every reference of a problem set, checked in the sandbox, as repair items."""
    if args.per_task is not None and args.per_task < 1:
        raise UserError("--per-task must be at least 1")
    if args.out.suffix != ".jsonl" or args.out.exists():
        raise UserError(f"{args.out}: the output must be a new .jsonl file")
    pairs = reference_pairs(args.set_dir)
    if args.split != "all":
        pairs = split_pairs(pairs, args.split, config.eval.split)
        if not pairs:
            raise UserError(f"{args.set_dir}: the {args.split!r} split holds no problems")
    params = repair_settings().mutate
    if args.per_task is not None:
        params = params.model_copy(update={"per_task": args.per_task})
    with open_sandbox(config) as box:
        items, log = build_items(pairs, box, params)
    write_items(items, args.out)
    summary = {
        "items": len(items),
        "tasks": len({i.task for i in items}),
        "problems": len(pairs),
        "file": str(args.out),
        "log": log,
    }
    return print_result(args.json, summary, _mutants)


def run_feedback_needed(args: argparse.Namespace, config: Settings) -> int:
    """The contexts of items whose blind arm failed in the report (`trainer.data.feedback_needed`)."""
    with open_store(config) as store:
        item_of = synthetic_items(store.sessions(source=SOURCE))
    meta = select_feedback_needed(args.dataset, args.report, item_of, args.out)
    need = meta["feedback_needed"]
    return print_new_dataset(
        args,
        meta,
        f"{need['items_blind_failed']} of {need['items_judged']} items left broken by the blind re-ask; "
        f"kept {need.get('kept', 0)} contexts and {need.get('kept_perturbed', 0)} perturbed twins; dropped "
        f"{need.get('dropped_blind_fixed', 0)} fixed blind, {need.get('dropped_first_turn', 0)} first-turn, "
        f"{need.get('dropped_not_in_report', 0)} not in the report",
    )


def _combined(meta: dict[str, Any], out: Path) -> str:
    """The text of `dataset combine`: what each part gave, then what was written."""
    lines = [
        f"{part['path']}: {part['taken']} of {part['train_rows']} training rows" for part in meta["combined"]["parts"]
    ]
    counts = meta["counts"]
    lines.append(
        f"wrote {counts['train_prompts']} training and {counts['validation_prompts']} validation prompts "
        f"({counts['validation_tasks']} validation tasks) to {out}; data hash {meta['data_hash'][:12]}"
    )
    return "\n".join(lines)


def _pinned(summary: dict[str, Any]) -> str:
    """The text of `dataset pin-repair`."""
    return (
        f"pinned {summary['items']} items of {summary['tasks']} tasks to {summary['file']}; "
        f"log: {json.dumps(summary['log'])}"
    )


def _mutants(summary: dict[str, Any]) -> str:
    """The text of `dataset mutants`."""
    log = summary["log"]
    return (
        f"wrote {summary['items']} repair items of {summary['tasks']} of {summary['problems']} problems to "
        f"{summary['file']}; references failing: {len(log['canonical_failed'])}, problems without a kept mutant: "
        f"{len(log['no_mutant'])} ({log['jobs']} sandbox jobs)"
    )
