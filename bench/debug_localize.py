"""`cobalt bench localize`: where `cobalt debug` tells the model to look. For every case of a
debug set, the user's file runs once in the sandbox and the functions the first prompt would show
in full (`debug.max_spans`) and name as the likely place of the bug are taken from the debug
session itself, once per `debug.localize` order (`lines`: the line spectrum's functions first;
`frames`: the failing frames' first), side by side; each is scored against the case's buggy
function (`function` in the cases file), and the lines the prompt would mark (`debug.mark_lines`,
or up to MARKS tied top lines when marks are off) against the lines the case's bug changed. No model
runs: the figure bounds what a model that follows the prompt can fix.

    cobalt bench localize --set historical --out localize.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any, get_args

from assistant.console import to_stderr
from assistant.debug.fix_file import debug_problem
from assistant.debug.open_session import debug_settings, open_debug_session
from assistant.debug.project_runs import LimitedRunner
from assistant.errors import UserError
from assistant.runtime import open_sandbox
from assistant.settings import DebugSettings, Settings
from bench.debug import SETS, spread, wilson
from bench.debug_cases import Case, read_cases

HELP = "where cobalt debug's prompt points: the buggy function named first / among those shown, per localization order"
ORDERS: tuple[str, ...] = get_args(DebugSettings.model_fields["localize"].annotation)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", default=None, help="cases file (default: the --set's)")
    parser.add_argument("--set", choices=sorted(SETS), default="debug", help="which debug set (as `bench debug`)")
    parser.add_argument("--sample", type=int, default=0, help="N cases spread over the file (0: all)")
    parser.add_argument("--out", default=None, help="write every case's shown functions to this JSON file")


def same_function(shown: str, bug: str) -> bool:
    """Whether a shown span is the buggy function: the same qualname, or one holding the other (a
    nested function is shown as its enclosing function)."""
    return shown == bug or bug.startswith(shown + ".") or shown.startswith(bug + ".")


MARKS = 4  # the most tied top lines marked, when `debug.mark_lines` is 0 (off): what marks would say


def shown_functions(case: Case, settings: Settings, runner: LimitedRunner) -> dict[str, list]:
    """The qualnames the first prompt shows in full, named one first, per localization order, and
    the lines it would mark (`debug.mark_lines`, or MARKS when that is off) under `marks_<order>`."""
    with tempfile.TemporaryDirectory(prefix="cobalt-bench-localize-") as tmp:
        project = case.unpack(Path(tmp))
        problem = debug_problem(project / case.target_file, case.test_command, project)
        before = runner.run(problem.starter_code, [], "pytest", project=problem.project())
        if before.all_passed:
            raise UserError(f"case {case.id}: the bug fails no test")
        out = {}
        for order in ORDERS:
            debug = debug_settings(settings).model_copy(update={"localize": order})
            session = open_debug_session(
                problem, None, runner, settings, before, debug=debug, source="bench", stream=False
            )
            out[order] = [span.qualname for span in session.implicated_spans()]  # type: ignore[attr-defined]
            most = debug.mark_lines or MARKS
            out[f"marks_{order}"] = list(session.marked_lines(most))  # type: ignore[attr-defined]
        return out


def bug_marked(row: dict[str, Any], order: str) -> bool:
    """Whether one of the bug's lines is among those `order`'s prompt would mark."""
    return bool(set(row["bug_lines"]) & set(row[f"marks_{order}"]))


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for order in ORDERS:
        first = sum(bool(r[order]) and same_function(r[order][0], r["bug"]) for r in rows)
        shown = sum(any(same_function(q, r["bug"]) for q in r[order]) for r in rows)
        out[order] = {"named_first": wilson(first, len(rows)), "shown": wilson(shown, len(rows)), "cases": len(rows)}
        out[order]["named_first"]["k"], out[order]["shown"]["k"] = first, shown
        marked = sum(bool(r[f"marks_{order}"]) for r in rows)
        right = sum(bug_marked(r, order) for r in rows)
        out[order]["marked"] = {**wilson(marked, len(rows)), "k": marked}
        out[order]["bug_marked"] = {**wilson(right, len(rows)), "k": right}
    return out


def render(report: dict[str, Any]) -> str:
    lines = [
        f"{report['cases']} cases ({report['set']}) · {report['max_spans']} functions shown · {report['wall_s']:.0f} s",
        f"{'order':<10}{'buggy function named first [95% CI]':>40}{'among those shown [95% CI]':>34}"
        f"{'lines marked':>14}{'the bug line among them':>25}",
    ]
    for order, m in report["orders"].items():
        cells = [
            f"{m[key]['k']}/{m['cases']} {m[key]['value']:.2f} [{m[key]['lo']:.2f}, {m[key]['hi']:.2f}]"
            for key in ("named_first", "shown")
        ]
        marks = [f"{m[key]['k']}/{m['cases']}" for key in ("marked", "bug_marked")]
        lines.append(f"{order:<10}{cells[0]:>40}{cells[1]:>34}{marks[0]:>14}{marks[1]:>25}")
    return "\n".join(lines)


def main(args: argparse.Namespace, settings: Settings) -> int:
    cases = spread(read_cases(Path(args.cases or SETS[args.set])), args.sample)
    sandbox = open_sandbox(settings)
    runner = LimitedRunner.of(sandbox, settings.sandbox.limits, settings.debug)
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    try:
        for i, case in enumerate(cases, 1):
            found = shown_functions(case, settings, runner)
            rows.append({"case": case.id, "bug": case.function, "bug_lines": list(case.bug_lines()), **found})
            said = "; ".join(f"{o} {found[o][:1]} marks {found[f'marks_{o}']}" for o in ORDERS)
            to_stderr(f"[{i}/{len(cases)}] {case.id}: {said}")
            if args.out:
                Path(args.out).write_text(json.dumps({"rows": rows}, indent=1))
    finally:
        sandbox.close()
    report = {
        "set": args.cases or args.set,
        "cases": len(rows),
        "max_spans": settings.debug.max_spans,
        "orders": summarize(rows),
        "wall_s": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(report) if args.json else render(report))
    return 0
