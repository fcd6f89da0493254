"""`cobalt bench TARGET`: benchmarks that measure alternatives side by side in one run and
print ratios. Every target is a module declared in the `cobalt.benchmarks` entry-point group
(pyproject.toml) exposing `HELP` (one line), `add_arguments(parser)` and
`main(args, settings) -> int`. A target's module is loaded only when it runs, so
`cobalt --help` pays for none of them (they import Docker, httpx, torch)."""

from __future__ import annotations

import argparse
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

from assistant.errors import UserError

BENCHMARK_GROUP = "cobalt.benchmarks"


def declared() -> dict[str, EntryPoint]:
    """Every installed benchmark by name (not loaded)."""
    return {point.name: point for point in entry_points(group=BENCHMARK_GROUP)}


def register(sub: argparse._SubParsersAction) -> None:
    names = sorted(declared())
    bench = sub.add_parser(
        "bench",
        help=f"run a benchmark ({', '.join(names)})",
        description="Run a benchmark; `cobalt bench TARGET --help` lists its options.",
    )
    bench.add_argument("target", metavar="TARGET", help=f"one of: {', '.join(names)}")
    bench.add_argument("options", nargs=argparse.REMAINDER, help="the target's options")
    bench.set_defaults(func=run)


def target_parser(name: str, module: ModuleType) -> argparse.ArgumentParser:
    """The option parser of one benchmark: `--json` plus the target's own options."""
    parser = argparse.ArgumentParser(prog=f"cobalt bench {name}", description=module.HELP)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    module.add_arguments(parser)
    return parser


def run(args: argparse.Namespace, settings: Any) -> int:
    points = declared()
    if args.target not in points:
        raise UserError(f"unknown benchmark {args.target!r}; choose one of: {', '.join(sorted(points))}")
    module = points[args.target].load()
    options = target_parser(args.target, module).parse_args(args.options)
    options.target = args.target
    return int(module.main(options, settings) or 0)
