"""`cobalt bench debug`: `cobalt debug` on real bugs in real libraries, edit answers against
whole-file answers, side by side in one run. Each case of examples/debug/cases.jsonl is a single
injected bug in a 250-600-line module of a real library, with that library's own test file. For
each case the modes run one after the other on a fresh copy of the project (greedy, T turns, the
embedded model by default): `functions` and `search_replace` (the edit modes of
assistant/debug/, each first trying small edits of the implicated code when debug.search is on,
as `cobalt debug` does; `--no-search` leaves the bugs to the model), `search` (the small-edit search
alone, no model), `model` (the model alone: `functions` without the search) and `whole_file` (the
whole file as the answer, as `cobalt debug` did before). `--set historical` runs the bugs that
real projects fixed in a release (examples/historical) instead of the injected ones.

Per mode: the fix rate (every test of the case's command passes) with a 95% interval, the median
wall time per case (and of the cases that reached the model), completion and prompt tokens per
turn, and context overflows (a request the server refused for its length, or a reply cut off by
the context). Nothing is stored.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from assistant.console import to_stderr
from assistant.debug.edit_prompt import DoesNotFit
from assistant.debug.edits import FORMATS, FUNCTIONS, WHOLE_FILE
from assistant.debug.fix_file import debug_problem
from assistant.debug.model_budget import token_counter
from assistant.debug.open_session import debug_settings, open_debug_session
from assistant.debug.project_runs import LimitedRunner
from assistant.errors import UserError
from assistant.loop.session import Session
from assistant.runtime import open_client, open_sandbox
from assistant.settings import Settings
from bench.debug_cases import CASES, Case, read_cases

SEARCH = "search"  # the small-edit search alone, no model
MODEL = "model"  # the model alone: the default edit format without the search
MODES = (*FORMATS, SEARCH, MODEL)
SETS = {"debug": CASES, "historical": CASES.parents[1] / "historical" / "cases.jsonl"}
OVERFLOW_WORDS = ("context length", "context window", "maximum context", "max_model_len", "too long")
HELP = "cobalt debug on real library bugs: edit answers vs whole-file answers (fix rate, time, tokens, overflows)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", default=None, help="cases file (default: the --set's)")
    parser.add_argument(
        "--set",
        choices=sorted(SETS),
        default="debug",
        help="debug: bugs injected by us (examples/debug); historical: bugs real projects fixed in a release "
        "(examples/historical)",
    )
    parser.add_argument("--modes", default=f"{FUNCTIONS},{WHOLE_FILE}", help=f"comma-separated, of: {', '.join(MODES)}")
    parser.add_argument("--turns", type=int, default=None, help="most turns per case (default: debug.turns)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases (0: all)")
    parser.add_argument(
        "--sample", type=int, default=0, help="N cases spread evenly over the file, every library in (0: all)"
    )
    parser.add_argument(
        "--candidates",
        type=int,
        default=None,
        help="edit modes: edits per turn, the first greedy, the best by the tests kept (default: debug.candidates)",
    )
    parser.add_argument(
        "--no-search", action="store_true", help="edit modes: no small-edit search before the model (debug.search)"
    )
    parser.add_argument("--model", default=None, help="model (default: config model.name)")
    parser.add_argument("--out", default=None, help="write every case's outcome to this JSON file")


def spread(cases: list[Case], n: int) -> list[Case]:
    """`n` cases at even steps through `cases` (all of them when n is 0 or too large)."""
    if not n or n >= len(cases):
        return cases
    return [cases[(i * len(cases)) // n] for i in range(n)]


def _overflowed(session: Session, context: int) -> bool:
    if session.error and any(w in session.error.lower() for w in OVERFLOW_WORDS):
        return True
    return any(
        t.finish_reason == "length" and (t.prompt_tokens or 0) + (t.tokens or 0) >= context - 8 for t in session.turns
    )


def run_case(
    case: Case,
    mode: str,
    settings: Settings,
    client: Any,
    runner: LimitedRunner,
    turns: int,
    candidates: int = 1,
    search: bool = True,
) -> dict:
    """One case in one mode on a fresh buggy copy; the outcome row (`candidates`: edits per turn;
    `search`: the edit modes try small edits first, when debug.search is on)."""
    loop = settings.loop.model_copy(update={"turns": turns, "temperature": [0.0], "top_p": 1.0, "repeat_resamples": 0})
    with tempfile.TemporaryDirectory(prefix="cobalt-bench-debug-") as tmp:
        project = case.unpack(Path(tmp))
        problem = debug_problem(project / case.target_file, case.test_command, project)
        start = time.perf_counter()
        before = runner.run(problem.starter_code, [], "pytest", project=problem.project())
        if before.all_passed:
            raise UserError(f"case {case.id}: the injected bug fails no test")
        searching = True if mode == SEARCH else False if mode == MODEL or not search else None
        debug = debug_settings(settings, FUNCTIONS if mode in (SEARCH, MODEL) else mode, candidates, searching)
        session = open_debug_session(
            problem, client, runner, settings, before, loop=loop, debug=debug, source="bench", stream=False
        )
        error = None
        try:
            if mode == SEARCH:
                session.search_turn()  # type: ignore[attr-defined]
                session.finish("passed" if session.passed else "unsolved")
            else:
                session.run()
        except DoesNotFit as exc:
            error = str(exc)
        wall = time.perf_counter() - start
    fixed_file = session.turns[-1].program if session.passed else None
    context = settings.debug.context_tokens or settings.server.max_model_len
    count = token_counter(client)  # the served model's tokenizer: a reply cut at its fence reports no usage
    return {
        "case": case.id,
        "mode": mode,
        "fixed": session.passed,
        "fixed_by": session.turns[-1].author if session.passed else None,
        "original_again": fixed_file is not None and same_code(fixed_file, case.original()),
        "search": session.meta.get("search"),
        "deadline": session.meta.get("deadline"),
        "prompt_caps": session.meta.get("prompt_caps", []),  # each model turn's paced prompt cap (turn_pace.py)
        "turns": len(session.turns),
        "wall_s": round(wall, 1),
        "completion_tokens": generated_tokens(session),
        "prompt_tokens": [sum(count(m["content"]) for m in t.messages) for t in session.turns],
        "overflow": _overflowed(session, context) or error is not None,
        "status": session.status,
        "error": error or session.error,
        "candidates": session.meta.get("candidates", []),  # every edit's tests passed, per turn
        "replies": [t.reply for t in session.turns],  # what the model answered, for reading the failures
        "feedback": [t.feedback for t in session.turns],
    }


def same_code(a: str, b: str) -> bool:
    """The same module up to formatting (the same AST)."""
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except SyntaxError:
        return a == b


def generated_tokens(session: Session) -> list[int]:
    """Completion tokens per turn, of every candidate edit (only the kept one's are on the turn)."""
    per_turn = {c["turn"]: c["completion_tokens"] for c in session.meta.get("candidates", [])}
    return [per_turn.get(t.index, t.tokens) for t in session.turns]


def wilson(k: int, n: int, z: float = 1.96) -> dict[str, float | None]:
    """k of n with its Wilson 95% interval (a bootstrap of 0 of n would say [0, 0])."""
    if n == 0:
        return {"value": None, "lo": None, "hi": None}
    p, z2 = k / n, z * z
    centre, half = (p + z2 / (2 * n)) / (1 + z2 / n), z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return {"value": round(p, 3), "lo": round(max(0.0, centre - half), 3), "hi": round(min(1.0, centre + half), 3)}


def reached_model(row: dict[str, Any]) -> bool:
    """Whether the case got a model turn: not the search mode, not fixed by the search, a turn taken
    (issue 48's time target is for these: a case the search fixes takes seconds)."""
    return row["mode"] != SEARCH and row.get("fixed_by") != "search" and row["turns"] > 0


def summarize(rows: list[dict[str, Any]], modes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in modes:
        mine = [r for r in rows if r["mode"] == mode]
        fixed = np.array([[float(r["fixed"])] for r in mine]).reshape(-1, 1)
        rate = wilson(int(fixed.sum()), len(mine))
        completion = [t for r in mine for t in r["completion_tokens"] if t]
        prompt = [t for r in mine for t in r["prompt_tokens"] if t]
        reached = [r["wall_s"] for r in mine if reached_model(r)]
        out[mode] = {
            "cases": len(mine),
            "fixed": int(fixed.sum()),
            "fix_rate": rate,
            "median_wall_s": statistics.median(r["wall_s"] for r in mine) if mine else None,
            "reached_model": len(reached),
            "median_wall_s_reached_model": statistics.median(reached) if reached else None,
            "median_completion_tokens_per_turn": statistics.median(completion) if completion else None,
            "median_prompt_tokens_per_turn": statistics.median(prompt) if prompt else None,
            "overflows": sum(r["overflow"] for r in mine),
            "fixed_by_search": sum(r.get("fixed_by") == "search" for r in mine),
            "fixed_by_model": sum(r.get("fixed_by") == "model" for r in mine),
            "original_again": sum(bool(r.get("original_again")) for r in mine),
        }
    return out


def render(report: dict[str, Any]) -> str:
    lines = [
        f"{report['cases']} cases · {report['turns']} turns · greedy, {report.get('candidates', 1)} edit(s) per turn "
        f"· edit-format modes: small-edit search first {'on' if report.get('search') else 'off'} (`model`: never) "
        f"· model {report['model']} "
        f"· {report['wall_s']:.0f} s",
        f"{'mode':<16}{'fixed':>8}{'fix rate [95% CI]':>26}{'median s/case':>15}{'tok/turn':>10}{'prompt tok':>12}"
        f"{'overflows':>11}{'by search':>11}{'by model':>10}{'= original':>12}{'to the model (median s)':>25}",
    ]
    for mode, m in report["modes"].items():
        r = m["fix_rate"]
        ci = f"{r['value']:.2f} [{r['lo']:.2f}, {r['hi']:.2f}]" if r["value"] is not None else "-"
        median = m["median_wall_s_reached_model"]
        reached = f"{m['reached_model']} ({median:.0f})" if median is not None else str(m["reached_model"])
        lines.append(
            f"{mode:<16}{m['fixed']:>5}/{m['cases']:<2}{ci:>26}{m['median_wall_s'] or 0:>15.0f}"
            f"{m['median_completion_tokens_per_turn'] or 0:>10.0f}{m['median_prompt_tokens_per_turn'] or 0:>12.0f}"
            f"{m['overflows']:>11}{m['fixed_by_search']:>11}{m['fixed_by_model']:>10}{m['original_again']:>12}"
            f"{reached:>25}"
        )
    for name, value in report["ratios"].items():
        lines.append(f"{name}: {value:.2f}x" if value is not None else f"{name}: -")
    return "\n".join(lines)


def main(args: argparse.Namespace, settings: Settings) -> int:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise UserError(f"unknown mode {unknown[0]!r}; choose from {', '.join(MODES)}")
    cases = spread(read_cases(Path(args.cases or SETS[args.set]), args.limit), args.sample)
    candidates = args.candidates or settings.debug.candidates
    args.turns = args.turns or settings.debug.turns or settings.loop.turns
    # the search alone asks no model: no server is started for it
    client = (
        open_client(settings, args.model, progress=to_stderr, keep_docstrings=True) if set(modes) - {SEARCH} else None
    )
    sandbox = open_sandbox(settings)
    runner = LimitedRunner.of(sandbox, settings.sandbox.limits, settings.debug)
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    try:
        for i, case in enumerate(cases, 1):
            for mode in modes:
                row = run_case(case, mode, settings, client, runner, args.turns, candidates, not args.no_search)
                rows.append(row)
                to_stderr(
                    f"[{i}/{len(cases)}] {case.id} {mode}: {'fixed' if row['fixed'] else 'not fixed'} "
                    f"in {row['turns']} turn(s), {row['wall_s']:.0f} s{' (overflow)' if row['overflow'] else ''}"
                )
                if args.out:
                    Path(args.out).write_text(json.dumps({"rows": rows}, indent=1))
    finally:
        sandbox.close()
    modes_summary = summarize(rows, modes)
    edit, whole = modes_summary.get(modes[0], {}), modes_summary.get(WHOLE_FILE, {})

    def ratio(a: Any, b: Any) -> float | None:
        return round(a / b, 2) if a is not None and b not in (None, 0) else None

    report = {
        "cases": len(cases),
        "set": args.cases or args.set,
        "turns": args.turns,
        "candidates": candidates,
        "search": settings.debug.search.enabled and not args.no_search,
        "model": getattr(client, "display_name", None) or (settings.model.name if client else None),
        "wall_s": round(time.perf_counter() - start, 1),
        "modes": modes_summary,
        "ratios": {
            f"fix rate {modes[0]} / whole_file": ratio(edit.get("fixed"), whole.get("fixed")),
            f"median s/case whole_file / {modes[0]}": ratio(whole.get("median_wall_s"), edit.get("median_wall_s")),
        }
        if WHOLE_FILE in modes and modes[0] != WHOLE_FILE
        else {},
        "rows": rows,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}) if args.json else render(report))
    if args.out:
        to_stderr(f"every case's replies and feedback: {args.out}")
    return 0
