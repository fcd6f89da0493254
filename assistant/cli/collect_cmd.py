"""`cobalt collect PROBLEMS --samples K --turns T --model M [--adapter base|vN] --concurrency C`:
sample K trajectories per problem from a reference model (its promoted adapter unless
`--adapter` says otherwise) into the store, with a progress bar;
rerunning skips what is already stored. PROBLEMS is a file, a directory or humaneval[:N];
`--split train --limit N` takes the first N problems of the training split.
Prints the collection report and the stored statistics of that model at the end."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from assistant.cli.loop_output import sigterm_as_interrupt
from assistant.cli.trajectories_cmd import print_stats
from assistant.console import add_concurrency, add_json, positive_int, to_stderr
from assistant.loop.collect import collect
from assistant.problems.resolve import load_problems
from assistant.problems.schema import ProblemError
from assistant.problems.splits import SPLITS, select
from assistant.runtime import open_client, session_run
from assistant.store.stats import stats

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("collect", help="sample trajectories from a reference model into the store")
    parser.add_argument("problems", metavar="PROBLEMS", help="a problem file, a directory, or humaneval[:N]")
    parser.add_argument(
        "--split",
        choices=SPLITS,
        default="train",
        help="only this split of the problems (configs/eval.yaml; default train: never the test "
        "or val tasks; `all` takes every problem)",
    )
    parser.add_argument("--limit", type=positive_int, help="only the first N problems (after --split)")
    parser.add_argument(
        "--samples", "-k", type=positive_int, help="sessions per problem (default: config collect.samples, 4)"
    )
    parser.add_argument("--turns", type=positive_int, help="most turns per session (default: config loop.turns)")
    parser.add_argument("--model", help="model name or litellm id (default: config model.name)")
    parser.add_argument(
        "--adapter",
        help="a registered adapter version (vN) or `base` (the bare model) instead of the promoted "
        "adapter (default: config model.adapter)",
    )
    add_concurrency(parser, "config collect.concurrency, 4")
    parser.add_argument("--temperature", type=float, help="sampling temperature for every turn")
    parser.add_argument(
        "--first-temperature",
        type=float,
        help="sampling temperature of the first turn only (later turns: --temperature or the config)",
    )
    parser.add_argument(
        "--full-horizon",
        action="store_true",
        help="take every turn, also after the public tests pass (yields 'public passed, hidden "
        "failed' training prompts)",
    )
    add_json(parser, "print one JSON object at the end")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    problems = select(load_problems(args.problems), args.split, settings.eval.split, args.limit)
    if not problems:
        raise ProblemError(f"{args.problems}: the {args.split!r} split holds no problems")
    loop = settings.loop.with_turns(args.turns)
    if args.temperature is not None:
        loop = loop.merged({"temperature": [args.temperature]})
    if args.first_temperature is not None:
        loop = loop.merged({"temperature": [args.first_temperature, *(loop.temperature[1:] or loop.temperature)]})
    section = settings.collect
    client = open_client(settings, args.model, adapter=args.adapter, progress=None if args.json else to_stderr)
    with (
        session_run(settings, f"collect {client.display_name}", args.json) as (sandbox, store, on_plan, on_session),
        sigterm_as_interrupt(),
    ):
        report = collect(
            problems,
            client,
            sandbox,
            store,
            loop,
            samples=args.samples or section.samples,
            concurrency=args.concurrency or section.concurrency,
            abort_after=section.abort_after_errors,
            full_horizon=args.full_horizon,
            share_first_turn=section.share_greedy_first_turn,
            on_session=on_session,
            on_plan=on_plan,
        )
        summary = stats(store, model=client.display_name, source="collect")
    if args.json:
        print(json.dumps({"report": report.to_dict(), "stats": summary}))
    else:
        _print_report(report.to_dict())
        print_stats(summary)
    if report.aborted:
        print(f"cobalt: error: collection stopped: {report.aborted}", file=sys.stderr)
        return 1
    return 0


def _print_report(report: dict[str, Any]) -> None:
    o = report["overlap"]
    print(
        f"ran {sum(report['statuses'].values())} session(s), {report['turns']} turns in {report['wall_s']} s;"
        f" {report['already_stored']} were already stored"
        + (f"; {report['shared_turns']} first turns shared, not generated" if report.get("shared_turns") else "")
    )
    if o:
        print(
            f"overlap: programs ran for {o['executing_s']} s, with model requests in flight "
            f"{o['share_of_execution_with_requests_in_flight']:.0%} of that time "
            f"(mean {o['mean_requests_in_flight_while_executing']}, "
            f"max {o['max_requests_in_flight_while_executing']} in flight)"
        )
    print()
