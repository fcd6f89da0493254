"""Validate the `cobalt bench debug` cases in examples/debug/cases.jsonl (issue #24 item 10).

Each case names a small project copied from a real library's source distribution
(packed as examples/debug/projects/<library>-<version>.tar.gz), a module in it (`target_file`), the library's own
test command, and a bug: `search` (lines of the original module, occurring exactly once)
replaced by `replace`. A case is valid when

- the module has 250-600 lines (another range with `--lines MIN,MAX`), `search` occurs in it
  exactly once and lies inside the function or method `function` (a dotted qualified name,
  e.g. `Table.to_text`);
- the buggy module still parses, and differs from the original;
- the original project passes every test of `test_command`, and the buggy one fails at least one
  (each test with its own time limit, debug.per_test_timeout_s: a test whose loop never ends fails).

The tests run inside the project's Docker sandbox (never on the host): each run gets a fresh
copy of the project in a temporary directory, and the sandbox writes the program (the
original or buggy module) into `target_file` there. The original of each (project, module,
command) is run once and shared by its cases. Prints one line per case and exits 1 when any
case is invalid.

    .venv/bin/python scripts/make_debug_cases.py               # every case
    .venv/bin/python scripts/make_debug_cases.py boltons- -j 1  # cases whose id starts so
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from assistant.debug.project_runs import LimitedRunner
from assistant.errors import UserError
from assistant.runtime import open_sandbox
from assistant.settings_loader import load_settings
from bench import debug_cases
from sandbox.api import Limits, Project, RunResult

ROOT = Path(__file__).resolve().parent.parent
CASES = debug_cases.CASES
FIELDS = ("id", "project", "target_file", "test_command", "function", "search", "replace", "bug")
MIN_LINES, MAX_LINES = 250, 600
TIMEOUT_S = 120
SLOW_S = 40.0  # a case whose bug hangs a test costs debug.per_test_timeout_s per hanging test


@dataclass
class Case(debug_cases.Case):
    problems: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.project, self.target_file, self.test_command)

    def project_in(self, into: Path) -> Project:
        """A fresh copy of the original project under `into`, as the sandbox's Project."""
        root = self.unpack(into, buggy=False)
        return Project(project_dir=str(root), target_file=self.target_file, test_command=self.test_command)


def load_cases(path: Path) -> list[Case]:
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        data = json.loads(line)
        missing = [k for k in FIELDS if not isinstance(data.get(k), str) or not data[k]]
        extra = sorted(set(data) - set(FIELDS))
        if missing or extra:
            raise SystemExit(f"{path}:{number}: missing or empty {missing}, unknown {extra}")
        cases.append(Case(**{k: data[k] for k in FIELDS}, projects=path.parent / "projects"))
    counts = Counter(c.id for c in cases)
    twice = [i for i, n in counts.items() if n > 1]
    if twice:
        raise SystemExit(f"{path}: duplicate case ids {twice}")
    return cases


def function_spans(tree: ast.AST) -> dict[str, tuple[int, int]]:
    """Qualified name (Class.method, outer.inner) -> (first line, last line) of each def."""
    spans: dict[str, tuple[int, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    spans[name] = (first, child.end_lineno or child.lineno)
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return spans


def static_checks(case: Case, min_lines: int = MIN_LINES, max_lines: int = MAX_LINES) -> None:
    """The checks that need no sandbox; problems go to case.problems."""
    if not case.archive().is_file():
        case.problems.append(f"no project archive {case.archive().name}")
        return
    try:
        text = case.original()
    except (KeyError, UserError):
        case.problems.append(f"no module {case.target_file} in {case.project}")
        return
    lines = len(text.splitlines())
    if not min_lines <= lines <= max_lines:
        case.problems.append(f"module has {lines} lines, not {min_lines}-{max_lines}")
    hits = text.count(case.search)
    if hits != 1:
        case.problems.append(f"search occurs {hits} times in the module, not once")
        return
    if case.search == case.replace:
        case.problems.append("replace equals search")
    try:
        ast.parse(case.buggy())
    except SyntaxError as exc:
        case.problems.append(f"the buggy module does not parse: {exc}")
    spans = function_spans(ast.parse(text))
    span = spans.get(case.function)
    if span is None:
        case.problems.append(f"no function {case.function} in the module")
        return
    start = text[: text.index(case.search)].count("\n") + 1
    end = start + case.search.rstrip("\n").count("\n")
    if not (span[0] <= start and end <= span[1]):
        case.problems.append(f"search (lines {start}-{end}) is not inside {case.function} (lines {span[0]}-{span[1]})")
    inner = [n for n, (a, b) in spans.items() if n.startswith(case.function + ".") and a <= start and end <= b]
    if inner:
        case.problems.append(f"search lies in the nested function {inner[0]}, name that one")


def counts(result: RunResult) -> str:
    tally = Counter(t.status for t in result.tests)
    text = f"{tally.get('passed', 0)} passed, {len(result.tests) - tally.get('passed', 0)} not"
    if result.sandbox_error:
        text += f" (sandbox error: {result.sandbox_error})"
    return text


def first_problem(result: RunResult) -> str:
    bad = result.first_failure()
    if bad is None:
        return result.sandbox_error or "no tests ran"
    return f"{bad.name}: {bad.status} {(bad.detail or bad.stderr or '')[:200]!r}"


def judge(orig: RunResult, bug: RunResult) -> list[str]:
    """Why the pair of runs does not make a valid case (empty: it does)."""
    if not orig.all_passed:
        return ["the original does not pass all tests"]
    if bug.sandbox_error or not bug.tests:
        return [f"the buggy run gave no test results: {first_problem(bug)}"]
    if len(bug.tests) != len(orig.tests):
        return [f"the buggy run has {len(bug.tests)} tests, not {len(orig.tests)} (collection broke)"]
    if bug.all_passed:
        return ["the bug fails no test"]
    return []


def _line_range(text: str) -> tuple[int, int]:
    """`MIN,MAX` as a pair of line counts."""
    try:
        low, high = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not MIN,MAX: {text!r}") from None
    if not 0 < low <= high:
        raise argparse.ArgumentTypeError(f"not 0 < MIN <= MAX: {text!r}")
    return low, high


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("prefixes", nargs="*", help="only the cases whose id starts with one of these")
    parser.add_argument("--cases", type=Path, default=CASES, help="the cases file (default: %(default)s)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="sandbox runs at once (default: %(default)s)")
    parser.add_argument(
        "--lines",
        type=_line_range,
        default=(MIN_LINES, MAX_LINES),
        metavar="MIN,MAX",
        help="the module sizes a case's set allows (default: %s,%s; examples/historical uses 80,1500)"
        % (MIN_LINES, MAX_LINES),
    )
    args = parser.parse_args(argv)

    cases = [c for c in load_cases(args.cases) if not args.prefixes or c.id.startswith(tuple(args.prefixes))]
    if not cases:
        print("no cases", file=sys.stderr)
        return 1
    for case in cases:
        static_checks(case, *args.lines)

    settings = load_settings()
    limits = Limits(**{**vars(settings.sandbox.limits), "timeout_s": TIMEOUT_S})
    runnable = [c for c in cases if not c.problems]
    originals = {c.key: c for c in reversed(runnable)}  # one case per (project, module, command)
    started = time.monotonic()
    box = open_sandbox(settings, pool_size=args.jobs, concurrency=args.jobs)
    runner = LimitedRunner(box, limits, settings.debug.per_test_timeout_s)  # each test its own limit, like cobalt debug
    try:
        with tempfile.TemporaryDirectory(prefix="debug-cases-") as tmp:
            jobs: dict[tuple[str, object], tuple[str, Project]] = {}
            for n, (key, case) in enumerate(sorted(originals.items())):
                jobs[("orig", key)] = (case.original(), case.project_in(Path(tmp) / f"orig{n}"))
            for n, case in enumerate(runnable):
                jobs[("bug", case.id)] = (case.buggy(), case.project_in(Path(tmp) / f"bug{n}"))

            def timed(job: tuple[str, Project]) -> tuple[RunResult, float]:
                began = time.monotonic()
                result = runner.run(job[0], [], "pytest", project=job[1])
                return result, time.monotonic() - began

            with ThreadPoolExecutor(max_workers=args.jobs) as pool:
                done = dict(zip(jobs, pool.map(timed, jobs.values())))
    finally:
        box.close()

    for key in sorted(originals):
        result, took = done[("orig", key)]
        status = "ok" if result.all_passed else f"NOT ALL PASS: {first_problem(result)}"
        print(f"original {key[0]}/{key[1]} [{key[2]}]: {counts(result)} in {took:.1f}s {status}")
    print()
    valid: Counter[str] = Counter({c.project: 0 for c in cases})
    for case in cases:
        line = "not run"
        if not case.problems:
            (orig, orig_s), (bug, bug_s) = done[("orig", case.key)], done[("bug", case.id)]
            case.problems += judge(orig, bug)
            case.problems += [
                f"the {what} run took {s:.0f}s (over {SLOW_S:.0f}s)"
                for what, s in (("original", orig_s), ("bug", bug_s))
                if s > SLOW_S
            ]
            line = f"original {counts(orig)}; bug {counts(bug)} in {bug_s:.1f}s"
        verdict = "VALID" if not case.problems else "INVALID: " + "; ".join(case.problems)
        print(f"{case.id:26} {line:58} {verdict}")
        valid[case.project] += not case.problems
    print()
    for project, n in sorted(valid.items()):
        print(f"{project}: {n} valid")
    total = sum(valid.values())
    print(f"{total}/{len(cases)} cases valid in {time.monotonic() - started:.0f}s")
    return 0 if total == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
