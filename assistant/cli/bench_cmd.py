"""`cobalt bench sandbox|serve|turn|train`: benchmarks that measure alternatives side by side in
one run and print ratios. Each target module exposes `HELP` (one line), `add_arguments(parser)`
and `main(args, settings) -> int`. The sandbox's and the assistant's targets are imported here;
other packages add theirs through the `cobalt.benchmarks` entry-point group (the trainer's
`train` is declared in pyproject.toml)."""

from __future__ import annotations

import argparse
from importlib.metadata import entry_points
from types import ModuleType

from assistant import bench_serve, bench_turn
from sandbox import bench as sandbox_bench

BENCHMARK_GROUP = "cobalt.benchmarks"


def targets() -> dict[str, ModuleType]:
    """Every benchmark by name: the built-in ones, then the installed entry points."""
    found = {"sandbox": sandbox_bench, "serve": bench_serve, "turn": bench_turn}
    found.update({point.name: point.load() for point in entry_points(group=BENCHMARK_GROUP)})
    return found


def register(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="run a benchmark")
    names = bench.add_subparsers(dest="target", metavar="TARGET", required=True)
    for name, module in targets().items():
        parser = names.add_parser(name, help=module.HELP)
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        module.add_arguments(parser)
        parser.set_defaults(func=module.main)
