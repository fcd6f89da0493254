"""`cobalt bench sanitize`: how many first-turn failures of function problems come from the
module-level code the model adds around its answer (its own asserts, prints, example calls),
measured on the model's own replies. Each (task, sample) gets one first-turn reply, sampled as the
loop samples it (its temperature and top_p, its prompt); the same reply is graded twice on the
hidden tests, as written and with `assistant.loop.sanitize`, so the two Pass@1 are paired exactly.

Tasks: the HumanEval split (default: val) and the function problems of
examples/problems. Prints Pass@1 both ways with 95% intervals (tasks resampled), the paired
delta, and the counts of replies that only one way passes. `--out FILE` keeps every reply.
Nothing is stored in the trajectory store.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from assistant.console import to_stderr
from assistant.loop import prompts
from assistant.loop.public_hidden import run_public_and_hidden
from assistant.messages import extract
from assistant.problems.resolve import read_problem_file
from assistant.problems.schema import Problem
from assistant.problems.sources import humaneval
from assistant.problems.splits import select
from assistant.runtime import open_client, open_sandbox
from assistant.settings import Settings
from trainer.eval.bootstrap import paired_intervals, ratio_intervals

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "problems"
HELP = "first-turn Pass@1 of function answers graded as written vs without the model's own module-level code"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="model (default: config model.name)")
    parser.add_argument(
        "--split",
        default="val",
        choices=("train", "val", "test"),
        help="HumanEval split (default: val; test is for reports)",
    )
    parser.add_argument("--samples", type=int, default=4, help="first-turn replies per task (default 4)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N HumanEval tasks of the split (0: all)")
    parser.add_argument("--no-examples", action="store_true", help="leave out examples/problems")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight (default 8)")
    parser.add_argument("--out", default=None, help="write every reply and both verdicts to this JSON file")


def tasks(settings: Settings, split: str, limit: int, examples: bool) -> list[Problem]:
    found = select(humaneval(), split, settings.eval.split, limit=limit or None)
    if examples:
        found += [
            p for path in sorted(EXAMPLES.glob("*.yaml")) for p in read_problem_file(path) if p.kind == "function"
        ]
    return found


def measure(settings: Settings, args: argparse.Namespace, log: Any = print) -> dict[str, Any]:
    problems = tasks(settings, args.split, args.limit, not args.no_examples)
    loop = settings.loop
    style = prompts.style_for(loop)
    client = open_client(settings, args.model, progress=to_stderr)
    sandbox = open_sandbox(settings)
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    work = [(p, k) for p in problems for k in range(args.samples)]

    def one(item: tuple[Problem, int]) -> dict[str, Any]:
        problem, sample = item
        reply = client.chat(
            style.initial_messages(problem),
            temperature=loop.temperature_for(0),
            top_p=loop.top_p,
            max_tokens=loop.max_tokens,
        )
        program = extract.code(reply.text)
        verdicts = {}
        for way, cut in (("as_written", False), ("sanitized", True)):
            hidden = run_public_and_hidden(sandbox, problem, program, cut)[1] if program is not None else None
            verdicts[way] = bool(hidden is not None and hidden.all_passed)
        return {"task": problem.id, "sample": sample, "reply": reply.text, "tokens": reply.completion_tokens} | verdicts

    try:
        with ThreadPoolExecutor(args.concurrency) as pool:
            for i, row in enumerate(pool.map(one, work), 1):
                rows.append(row)
                if i % 20 == 0 or i == len(work):
                    log(f"{i}/{len(work)} replies graded ({time.perf_counter() - start:.0f} s)")
    finally:
        sandbox.close()
    return summarize(problems, args.samples, rows) | {
        "model": getattr(client, "display_name", None) or args.model or settings.model.name,
        "temperature": loop.temperature_for(0),
        "top_p": loop.top_p,
        "split": args.split,
        "wall_s": round(time.perf_counter() - start, 1),
        "rows": rows,
    }


def summarize(problems: list[Problem], samples: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Pass@1 as written and sanitized (tasks resampled), their paired delta and the discordant counts."""
    ids = [p.id for p in problems]
    index = {task: i for i, task in enumerate(ids)}
    wrote = np.zeros((len(ids), 1))
    cut = np.zeros((len(ids), 1))
    den = np.zeros((len(ids), 1))
    for row in rows:
        i = index[row["task"]]
        wrote[i, 0] += row["as_written"]
        cut[i, 0] += row["sanitized"]
        den[i, 0] += 1
    (a,) = ratio_intervals(wrote, den)
    (b,) = ratio_intervals(cut, den)
    (delta,) = paired_intervals(wrote, den, cut, den)
    return {
        "tasks": len(ids),
        "samples": samples,
        "replies": len(rows),
        "pass_as_written": a.to_dict(),
        "pass_sanitized": b.to_dict(),
        "delta": delta.to_dict(),
        "failures_from_added_code": sum(r["sanitized"] and not r["as_written"] for r in rows),
        "passes_lost_by_sanitizing": sum(r["as_written"] and not r["sanitized"] for r in rows),
        "first_turn_failures_as_written": sum(not r["as_written"] for r in rows),
    }


def render(report: dict[str, Any]) -> str:
    def rate(e: dict[str, Any]) -> str:
        return f"{e['value']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}]"

    d = report["delta"]
    return "\n".join(
        [
            f"{report['tasks']} tasks x {report['samples']} samples = {report['replies']} first-turn replies "
            f"(temperature {report['temperature']:g}, top_p {report['top_p']:g}, HumanEval {report['split']} split "
            f"+ example function problems), {report['wall_s']:.0f} s",
            f"{'graded':<36}{'Pass@1 [95% CI]':>28}",
            f"{'as written':<36}{rate(report['pass_as_written']):>28}",
            f"{'without the added module-level code':<36}{rate(report['pass_sanitized']):>28}",
            f"paired delta (sanitized - as written): {d['delta']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]",
            f"first-turn failures as written: {report['first_turn_failures_as_written']}; caused by the model's own "
            f"module-level code: {report['failures_from_added_code']}; passes lost by sanitizing: "
            f"{report['passes_lost_by_sanitizing']}",
        ]
    )


def main(args: argparse.Namespace, settings: Settings) -> int:
    report = measure(settings, args, to_stderr)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}) if args.json else render(report))
    return 0
