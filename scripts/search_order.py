"""Where each debug case's own fix stands in the small-edit search's order, without timing.

The search's outcome depends on its budget (`debug.search.max_runs`, `max_seconds`) and on the
machine's load; the order it tries edits in does not. For each case this runs the library's
tests once on the buggy module (in the sandbox, as `cobalt debug` does), builds the search's lines
and edit stream exactly as `cobalt debug` would, and prints the position of the first edit whose
file is the library's own module again (the right fix), or `-` when the search never makes it.
A position under `max_runs` (and reachable in `max_seconds` at the machine's pace) is a fix the
search can find; earlier positions are cheaper.

    .venv/bin/python scripts/search_order.py                        # every case of examples/debug
    .venv/bin/python scripts/search_order.py isodate- --cases FILE  # cases whose id starts so
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from itertools import islice
from pathlib import Path

from assistant.debug import edit_search
from assistant.debug.debug_session import DebugSession
from assistant.debug.fix_file import debug_problem
from assistant.debug.localize import spans
from assistant.debug.open_session import open_debug_session
from assistant.debug.project_runs import LimitedRunner
from assistant.debug.spectrum import ranked_lines
from assistant.runtime import open_sandbox
from assistant.settings_loader import load_settings
from bench.debug import same_code
from bench.debug_cases import CASES, Case, read_cases

LOOK = 3000  # edits looked through per case at most


def position(case: Case, runner: LimitedRunner, settings: object) -> tuple[int | None, int, str]:
    """(1-based position of the right fix or None, edits in the stream looked at, its operator)."""
    with tempfile.TemporaryDirectory(prefix="cobalt-search-order-") as tmp:
        project = case.unpack(Path(tmp))
        problem = debug_problem(project / case.target_file, case.test_command, project)
        before = runner.run(problem.starter_code, [], "pytest", project=problem.project())
        session = open_debug_session(problem, None, runner, settings, before, source="bench", stream=False)  # type: ignore[arg-type]
        assert isinstance(session, DebugSession)
        source, run, failed, found = session._implicated(session.debug.search.spans)
        lines = edit_search.search_lines(found, failed, case.target_file, ranked_lines(spans(source), run.tests))
        order = edit_search.headers_last(source, lines)
        original = case.original()
        stream = list(islice(edit_search.candidates(source, order, session.debug.search), LOOK))
        for i, edit in enumerate(stream, 1):
            if same_code(edit.source, original):
                return i, len(stream), edit.operator
        return None, len(stream), ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("prefixes", nargs="*", help="only the cases whose id starts with one of these")
    parser.add_argument("--cases", type=Path, default=CASES, help="the cases file (default: %(default)s)")
    args = parser.parse_args(argv)
    settings = load_settings()
    cases = [c for c in read_cases(args.cases) if not args.prefixes or c.id.startswith(tuple(args.prefixes))]
    box = open_sandbox(settings)
    runner = LimitedRunner.of(box, settings.sandbox.limits, settings.debug)
    found = 0
    try:
        for case in cases:
            at, looked, operator = position(case, runner, settings)
            found += at is not None and at <= settings.debug.search.max_runs
            print(f"{case.id:28} {at if at else '-':>5} of {looked:<5} {operator}", flush=True)
    finally:
        box.close()
    print(f"{found}/{len(cases)} right fixes within max_runs={settings.debug.search.max_runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
