"""`cobalt bench sandbox|serve|turn|train`: benchmarks that measure alternatives side by side in
one run and print ratios. Each target module exposes `add_arguments(parser)` and
`main(args, cfg) -> int`; it is imported only when its benchmark runs."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

TARGETS = {
    "sandbox": ("sandbox.bench", "warm pool vs docker run per program/test vs bare python3"),
    "serve": ("assistant.bench_serve", "vLLM single and concurrent tok/s vs transformers generate"),
    "turn": ("assistant.bench_turn", "seconds per graded turn with each latency change on and off"),
    "train": ("trainer.bench", "seconds per example: bandit GRPO vs multi-turn online GRPO"),
}


def register(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="run a benchmark")
    targets = bench.add_subparsers(dest="target", metavar="TARGET", required=True)
    for name, (module_name, help_text) in TARGETS.items():
        parser = targets.add_parser(name, help=help_text)
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            parser.set_defaults(func=_missing(name))
            continue
        module.add_arguments(parser)
        parser.set_defaults(func=module.main)


def _missing(name: str):
    def run(args: argparse.Namespace, cfg: dict[str, Any]) -> int:
        from assistant.cli.errors import UserError

        raise UserError(f"the {name} benchmark is not available in this version")

    return run
