"""`cobalt eval --benchmark humaneval-repair|natural-repair|repair:FILE.jsonl` and `eval compare`
of two repair reports; `trainer.cli.eval_cmd` parses the arguments and hands over here.

    cobalt eval -b humaneval-repair --split test [--turns T] [--wording NAME] [--no-blind]
    cobalt eval -b natural-repair --split val     # the natural set's val bugs (the gate's)
    cobalt eval -b repair:bugs.jsonl
    cobalt eval compare base/report.json adapter/report.json

Writes `report.json` (kind `repair`) to --out (default: the data dir's
`eval/<model>-<benchmark>-<split>-<wording>/`) and prints the per-turn table and every
item's outcome by id.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.console import to_stderr
from assistant.errors import UserError
from assistant.problems.natural import NATURAL_DIR
from assistant.problems.schema import ProblemError
from assistant.problems.splits import natural_splits
from assistant.runtime import open_client, session_run
from assistant.settings import EvalSection
from trainer.cli.train_options import eval_out_dir
from trainer.repair.items import RepairItem, load_items
from trainer.repair.pins import pinned_items
from trainer.repair.repair_report import (
    RepairReport,
    compare,
    comparison_json,
    comparison_table,
    is_repair_report,
    table,
)
from trainer.repair.repair_run import run_repair
from trainer.repair.repair_settings import repair_settings
from trainer.repair.wording import WordingError

if TYPE_CHECKING:
    from assistant.settings import Settings

__all__ = [
    "HUMANEVAL",
    "NATURAL",
    "is_repair",
    "is_repair_report",
    "load_repair_items",
    "run_repair_eval",
    "run_repair_compare",
]
HUMANEVAL = "humaneval-repair"
NATURAL = "natural-repair"
# The natural set's committed bugs: seeded mutants of its val references, made by
# `cobalt dataset mutants examples/natural --split val --out examples/natural/repair-val.jsonl`.
NATURAL_FILE = NATURAL_DIR / "repair-val.jsonl"
PREFIX = "repair:"
SPLIT_BENCHMARKS = (HUMANEVAL, NATURAL)  # named sets whose items follow the tasks' splits


def is_repair(benchmark: str) -> bool:
    return benchmark in SPLIT_BENCHMARKS or benchmark.startswith(PREFIX)


def load_repair_items(benchmark: str, split: str, limit: int | None, settings: EvalSection) -> list[RepairItem]:
    """The items of `humaneval-repair` (pinned, one split), of `natural-repair` (the committed
    bugs of the natural set whose task is in `split`: its val split only) or of a `repair:FILE.jsonl`."""
    if benchmark == HUMANEVAL:
        items = pinned_items(split, settings.split)
    elif benchmark == NATURAL:
        splits = natural_splits(settings.split)
        items = [i for i in load_items(NATURAL_FILE) if split == "all" or splits.get(i.task) == split]
    else:
        items = load_items(Path(benchmark[len(PREFIX) :]))
    items = items[:limit] if limit is not None else items
    if not items:
        raise ProblemError(f"{benchmark}: the {split!r} split holds no repair items")
    return items


def run_repair_eval(args: argparse.Namespace, config: Settings, settings: EvalSection) -> int:
    if args.perturbed or args.samples != 1:
        raise UserError(
            "the repair benchmark takes neither --perturbed nor --samples (it is greedy, one session per item and arm)"
        )
    if args.temperature is not None and args.temperature < 0:
        raise UserError(f"--temperature must be 0 or more, not {args.temperature:g}")
    items = load_repair_items(args.benchmark, args.split, args.limit, settings)
    quiet = args.json
    client = open_client(config, args.model, adapter=args.adapter, progress=None if quiet else to_stderr)
    name = args.benchmark if args.benchmark in SPLIT_BENCHMARKS else Path(args.benchmark[len(PREFIX) :]).stem
    repair = repair_settings()
    if args.temperature is not None:
        repair = repair.merged({"benchmark": {"temperature": args.temperature}})
    try:
        with session_run(config, f"repair {client.display_name}", quiet) as (sandbox, store, on_plan, on_session):
            report = run_repair(
                items,
                client,
                sandbox,
                store,
                loop=config.loop,
                settings=settings,
                turns=args.turns,
                blind=not args.no_blind,
                wording_name=args.wording,
                concurrency=args.concurrency,
                repair=repair,
                benchmark=name,
                split=args.split if args.benchmark in SPLIT_BENCHMARKS else "all",
                adapter=args.adapter,
                on_plan=on_plan,
                on_session=on_session,
            )
    except WordingError as exc:
        raise UserError(str(exc)) from None
    out = eval_out_dir(config, args.out, f"{client.display_name}-{name}-{report.split}-{report.wording}")
    path = report.save(out / "report.json")
    print(json.dumps(report.to_dict()) if args.json else f"{table(report)}\n\nreport: {path}")
    if report.aborted:
        raise UserError(f"the repair benchmark was aborted ({report.aborted})")
    if report.errored():
        raise UserError(
            f"{len(report.errored())} session(s) ended on an error and are counted nowhere; rerun it to finish"
        )
    return 0


def run_repair_compare(args: argparse.Namespace, settings: EvalSection) -> int:
    if args.plot is not None:
        raise UserError("--plot draws Pass@1 reports; repair reports have no plot")
    try:
        a, b = RepairReport.load(args.report_a), RepairReport.load(args.report_b)
        margin = settings.compare.margin if args.margin is None else args.margin
        result = compare(a, b, margin, metric=args.metric or "fix_rate", turn=args.turn)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"cannot compare the repair reports: {exc}") from None
    print(json.dumps(comparison_json(result)) if args.compare_json else comparison_table(result, a.turns))
    return 0
