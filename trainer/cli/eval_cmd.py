"""`cobalt eval`: multi-turn evaluation, its paired comparison and the benchmark splits.

    cobalt eval --benchmark humaneval|FILE [--split all|train|val|test] --turns T --samples N
                --model M [--adapter NAME] [--perturbed] [--concurrency C] [--limit K] [--out DIR]
    cobalt eval compare A.json B.json [--metric M] [--turn T] [--margin X] [--plot FILE]
    cobalt eval merge A.json B.json ... --out DIR
    cobalt eval splits [--benchmark humaneval|FILE]
    cobalt eval ceiling --benchmark B --split S [--adapter V] [--k 1 2 4 8] [--json]

An evaluation writes `report.json` and `pass_at_1.png` to --out (default: the data dir's
`eval/<model>-<benchmark>-<split>[-perturbed]/`) and prints the per-turn table; rerunning it
reuses the sessions already stored.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.console import add_concurrency, positive_int, to_stderr
from assistant.errors import UserError
from assistant.problems.resolve import load_problems
from assistant.runtime import open_client, open_store, session_run
from assistant.settings import EvalSection
from trainer.cli.train_options import eval_out_dir
from trainer.eval.eval_report import EvalReport, describe, merge, plot, table
from trainer.eval.eval_sets import SPLITS, load_benchmark, select
from trainer.eval.evaluate import evaluate
from trainer.eval.paired import CompareError, compare, comparison_table
from trainer.eval.repair_ceiling import ceiling, ceiling_table, task_repairs
from trainer.repair import repair_eval as repair

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "eval",
        help="multi-turn Pass@1 of a model (compare, splits: see eval -h)",
        description="Evaluate a model over T turns of execution feedback; "
        "`eval compare A.json B.json` pairs two reports; "
        "`eval splits` lists the splits.",
    )
    parser.add_argument(
        "--benchmark",
        "-b",
        default="humaneval",
        help="humaneval, natural, a problem file/directory, humaneval-repair, natural-repair or repair:FILE.jsonl",
    )
    parser.add_argument("--split", choices=SPLITS, default="all", help="which split of the benchmark (default all)")
    parser.add_argument("--turns", type=positive_int, help="turns per session (default: config loop.turns)")
    parser.add_argument("--samples", "-n", type=positive_int, default=1, help="sessions per problem (default 1)")
    parser.add_argument("--model", help="model name or litellm id (default: config model.name)")
    parser.add_argument("--adapter", help="a LoRA adapter loaded in the server, evaluated instead of the base model")
    parser.add_argument(
        "--perturbed",
        action="store_true",
        help="swap two public expected outputs per problem and measure reward hacking",
    )
    add_concurrency(parser, "config sandbox.concurrency")
    parser.add_argument("--limit", type=positive_int, help="only the first K problems of the split")
    parser.add_argument("--temperature", type=float, help="sampling temperature for every turn")
    parser.add_argument("--out", type=Path, help="directory for report.json and pass_at_1.png")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    parser.add_argument(
        "--wording",
        help="repair benchmarks: the feedback-turn wording (configs/prompts.yaml; default: loop.feedback_wording)",
    )
    parser.add_argument("--no-blind", action="store_true", help="repair benchmarks: skip the blind control")
    parser.set_defaults(func=run, eval_command=None)
    commands = parser.add_subparsers(dest="eval_command", metavar="{compare,merge,splits,ceiling}")
    cmp = commands.add_parser("compare", help="paired per-turn deltas of two reports (B - A)")
    cmp.add_argument("report_a", type=Path, metavar="A.json", help="the baseline report")
    cmp.add_argument("report_b", type=Path, metavar="B.json", help="the candidate report")
    cmp.add_argument("--metric", help="metric of the verdict (default: configs/eval.yaml compare.metric)")
    cmp.add_argument("--turn", type=int, help="turn of the verdict (default: the last)")
    cmp.add_argument("--margin", type=float, help="largest tolerated drop (default: compare.margin)")
    cmp.add_argument("--plot", type=Path, help="also write a PNG with both reports' Pass@1 per turn")
    cmp.add_argument("--json", action="store_true", dest="compare_json", help="print one JSON object")
    mrg = commands.add_parser("merge", help="one report of a model on disjoint problem sets evaluated apart")
    mrg.add_argument("reports", type=Path, nargs="+", metavar="REPORT.json", help="two or more reports")
    mrg.add_argument("--out", type=Path, required=True, help="directory of the merged report.json")
    splits = commands.add_parser("splits", help="the deterministic splits of a benchmark")
    splits.add_argument("--benchmark", "-b", dest="splits_benchmark", default="humaneval")
    splits.add_argument("--json", action="store_true", dest="splits_json", help="print the ids as JSON")
    ceil = commands.add_parser(
        "ceiling", help="pass@k of the sampled repairs of stored first-turn failures (after `cobalt collect`)"
    )
    ceil.add_argument("--benchmark", "-b", dest="ceiling_benchmark", default="humaneval")
    ceil.add_argument("--split", dest="ceiling_split", choices=SPLITS, default="all")
    ceil.add_argument(
        "--adapter", dest="ceiling_adapter", help="only sessions of this adapter version; base: of none (default any)"
    )
    ceil.add_argument("--model", dest="ceiling_model", help="only sessions of this model as stored (default any)")
    ceil.add_argument("--source", default="collect", help="session source (default collect)")
    ceil.add_argument("--k", type=positive_int, nargs="+", default=[1, 2, 4, 8], help="the k of pass@k")
    ceil.add_argument("--json", action="store_true", dest="ceiling_json", help="print one JSON object")


def run(args: argparse.Namespace, config: Settings) -> int:
    settings = config.eval
    if args.eval_command == "compare":
        if repair.is_repair_report(args.report_a) or repair.is_repair_report(args.report_b):
            return repair.run_repair_compare(args, settings)
        return run_compare(args, settings)
    if args.eval_command == "splits":
        return run_splits(args, settings)
    if args.eval_command == "merge":
        return run_merge(args)
    if args.eval_command == "ceiling":
        return run_ceiling(args, config)
    if repair.is_repair(args.benchmark):
        return repair.run_repair_eval(args, config, settings)
    return run_eval(args, config, settings)


def run_eval(args: argparse.Namespace, config: Settings, settings: EvalSection) -> int:
    problems = load_benchmark(args.benchmark, args.split, settings, args.limit)
    turns = args.turns or config.loop.turns
    if args.temperature is not None:  # the command line wins over the eval.loop overrides
        settings = settings.model_copy(update={"loop": {**settings.loop, "temperature": [args.temperature]}})
    concurrency = args.concurrency or config.sandbox.concurrency
    quiet = args.json
    client = open_client(config, args.model, adapter=args.adapter, progress=None if quiet else to_stderr)
    name = Path(args.benchmark).stem if Path(args.benchmark).exists() else args.benchmark
    out = eval_out_dir(
        config, args.out, f"{client.display_name}-{name}-{args.split}" + ("-perturbed" if args.perturbed else "")
    )
    with session_run(config, f"eval {client.display_name}", quiet) as (sandbox, store, on_plan, on_session):
        report = evaluate(
            config.loop,
            problems,
            client,
            sandbox,
            store,
            turns=turns,
            samples=args.samples,
            perturbed=args.perturbed,
            concurrency=concurrency,
            settings=settings,
            benchmark=name,
            split=args.split,
            adapter=args.adapter,
            on_plan=on_plan,
            on_session=on_session,
        )
    report_path = report.save(out / "report.json")
    plot_path = plot([report], out / "pass_at_1.png")
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        print(describe(report) + "\n")
        print(table(report) + "\n")
        print(f"report: {report_path}\nplot:   {plot_path}")
    if report.aborted or report.missing:
        why = report.aborted or f"{len(report.missing)} session(s) did not finish"
        raise UserError(f"the evaluation is incomplete ({why}); rerun it to finish")
    return 0


def run_compare(args: argparse.Namespace, settings: EvalSection) -> int:
    try:
        a, b = EvalReport.load(args.report_a), EvalReport.load(args.report_b)
        result = compare(a, b, settings, metric=args.metric, turn=args.turn, margin=args.margin)
    except (CompareError, ValueError) as exc:
        raise UserError(str(exc)) from None
    if args.plot:
        plot([a, b], args.plot, title=f"{a.label} vs {b.label}")
    print(json.dumps(result.to_dict()) if args.compare_json else comparison_table(result))
    return 0


def run_merge(args: argparse.Namespace) -> int:
    try:
        merged = merge([EvalReport.load(path) for path in args.reports])
    except ValueError as exc:
        raise UserError(str(exc)) from None
    path = merged.save(args.out / "report.json")
    print(table(merged))
    print(f"merged {len(args.reports)} reports ({len(merged.problems)} problems) into {path}")
    return 0


def run_ceiling(args: argparse.Namespace, config: Settings) -> int:
    problems = load_benchmark(args.ceiling_benchmark, args.ceiling_split, config.eval)
    store = open_store(config)
    try:
        repairs = task_repairs(
            store,
            [p.id for p in problems],
            source=args.source,
            adapter=args.ceiling_adapter,
            model=args.ceiling_model,
        )
    finally:
        store.close()
    if not repairs:
        where = f"the {args.ceiling_split} split of {args.ceiling_benchmark}"
        raise UserError(f"no stored {args.source} sessions on {where}; run `cobalt collect` on it first")
    result = ceiling(repairs, args.k, config.eval.bootstrap)
    print(json.dumps(result.to_dict()) if args.ceiling_json else ceiling_table(result))
    return 0


def run_splits(args: argparse.Namespace, settings: EvalSection) -> int:
    rule = settings.split
    problems = load_problems(args.splits_benchmark)
    ids = {name: [p.id for p in select(problems, name, rule)] for name in SPLITS}  # a whole set's own splits
    if args.splits_json:
        print(json.dumps(ids))
        return 0
    print(
        f"seed {rule.seed}: ids ordered by sha256('<seed>:<id>'); test share "
        f"{rule.test_share:g}, val share of the rest {rule.val_share_of_train:g}"
    )
    for name in ("test", "train", "val"):
        print(f"{name} ({len(ids[name])}): {' '.join(sorted(ids[name], key=_natural))}")
    return 0


def _natural(text: str) -> tuple[Any, ...]:
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"(\d+)", text))
