"""What one edited file's test run costs the debug search, the whole command against the tests that
failed alone (`debug.search.failing_first`), side by side on the same buggy module.

For each case the buggy module runs `--rounds` times with the case's whole test command and
`--rounds` times with only its failing tests selected (the sandbox's `cobalt_only` plugin), in the
sandbox and with the limits `cobalt debug` uses; the fastest of each is printed with their ratio.
The buggy module stands for an edit that does not fix it, which is what most of the search's edits
are.

    .venv/bin/python scripts/run_cost.py markdown-1 click-1 --cases examples/historical/cases.jsonl
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from assistant.debug.fix_file import debug_problem
from assistant.debug.project_runs import LimitedRunner
from assistant.runtime import open_sandbox
from assistant.settings_loader import load_settings
from bench.debug_cases import CASES, read_cases


def fastest(runner: LimitedRunner, program: str, project: object, rounds: int) -> tuple[float, int]:
    """The fastest of `rounds` runs in seconds, and the tests the last one ran."""
    best, ran = float("inf"), 0
    for _ in range(rounds):
        start = time.perf_counter()
        result = runner.run(program, [], "pytest", project=project)
        best, ran = min(best, time.perf_counter() - start), len(result.tests)
    return best, ran


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="+", help="case ids")
    parser.add_argument("--cases", default=str(CASES), help="cases file (default: examples/debug)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    settings = load_settings()
    cases = {c.id: c for c in read_cases(Path(args.cases), 0)}
    sandbox = open_sandbox(settings)
    runner = LimitedRunner.of(sandbox, settings.sandbox.limits, settings.debug)
    print(f"{'case':<16}{'tests':>6}{'failing':>8}{'whole s':>9}{'failing s':>10}{'ratio':>7}")
    try:
        for cid in args.ids:
            case = cases[cid]
            with tempfile.TemporaryDirectory() as tmp:
                project_dir = case.unpack(Path(tmp))
                problem = debug_problem(project_dir / case.target_file, case.test_command, project_dir)
                project = problem.project()
                before = runner.run(problem.starter_code, [], "pytest", project=project)
                failing = tuple(str(t.name) for t in before.tests if not t.passed)
                whole, ran = fastest(runner, problem.starter_code, project, args.rounds)
                alone, _ = fastest(runner, problem.starter_code, replace(project, only=failing), args.rounds)
                print(f"{cid:<16}{ran:>6}{len(failing):>8}{whole:>9.2f}{alone:>10.2f}{alone / whole:>7.2f}")
    finally:
        sandbox.close()


if __name__ == "__main__":
    main()
