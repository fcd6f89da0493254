"""`cobalt debug FILE --test "CMD" [--apply]`: iterate on FILE (inside its project) until
CMD passes in the sandbox, print the final diff, and write it back only with --apply
(keeping FILE.orig). Exit 0 when the tests pass (or already passed), 1 otherwise."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.cli.loop_output import add_output_flags, printer, session_json, sigterm_as_interrupt
from assistant.console import positive_int
from assistant.debug.fix_file import apply_fix, best_turn, debug_problem, project_root, unified_diff
from assistant.loop import feedback
from assistant.loop.recorder import record
from assistant.loop.session import Session, run_public_and_hidden
from assistant.runtime import open_client, open_sandbox, open_store, to_stderr

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("debug", help="fix a file of a local project until its tests pass")
    parser.add_argument("file", metavar="FILE", help="the Python file to fix")
    parser.add_argument("--test", required=True, metavar="CMD", help='the test command, e.g. "python -m pytest -q"')
    parser.add_argument("--project", help="the project root (default: nearest dir with pyproject.toml, .git, ...)")
    parser.add_argument("--turns", type=positive_int, help="most turns (default: config loop.turns)")
    parser.add_argument("--model", help="model name or litellm id (default: config model.name)")
    parser.add_argument("--apply", action="store_true", help="write the fix to FILE (a backup is kept)")
    add_output_flags(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    file = Path(args.file)
    root = Path(args.project).resolve() if args.project else project_root(file) if file.exists() else None
    problem = debug_problem(file, args.test, root)
    original = problem.starter_code
    loop = settings.loop.with_turns(args.turns)
    say = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    sandbox = open_sandbox(settings)
    try:
        before, _ = run_public_and_hidden(sandbox, problem, original)
        if before.all_passed:
            say(f"the tests already pass ({len(before.tests)} passed); nothing to fix")
            if args.json:
                print(json.dumps({"status": "already_passing", "session_id": None, "turns": [], "diff": ""}))
            return 0
        problem = debug_problem(file, args.test, root, feedback.render(before))
        say(
            f"{problem.target_file} in {problem.project_dir}: {sum(t.passed for t in before.tests)}"
            f"/{len(before.tests)} tests pass now"
        )
        client = open_client(settings, args.model, progress=None if args.json else to_stderr)
        client.logit_bias = None  # the user's files keep their docstrings (model.suppress_docstrings is for tasks)
        live = printer(args, loop.turns, 0, 0)
        with open_store(settings) as store, sigterm_as_interrupt():
            session = record(Session(problem, client, sandbox, loop, source="debug", stream=live is not None), store)
            if live is not None:
                session.subscribe(live)
            session.run()
    finally:
        sandbox.close()
    return _report(args, file, original, session)


def _report(args: argparse.Namespace, file: Path, original: str, session: Session) -> int:
    best = best_turn(session.turns)
    fixed = best.program if best else None
    diff = unified_diff(original, fixed, str(session.problem.target_file)) if fixed else ""
    passed = bool(best and best.passed_public)
    backup = apply_fix(file, fixed) if args.apply and passed and fixed and diff else None
    if args.json:
        print(
            json.dumps(
                session_json(session)
                | {
                    "diff": diff,
                    "passed": passed,
                    "applied": backup is not None,
                    "backup": str(backup) if backup else None,
                }
            )
        )
    else:
        print(
            f"\n{'the tests pass' if passed else 'no fix passes every test'} after {len(session.turns)} "
            f"turn(s); session {session.id}{'; ' + session.error if session.error else ''}"
        )
        if diff:
            print("\n" + diff, end="")
        if backup:
            print(f"\nwrote {file} (backup: {backup})")
        elif passed and diff:
            print(f"\nrun again with --apply to write this fix to {file}")
    if args.apply and not passed:
        print(f"cobalt: error: no passing fix was found; {file} is unchanged", file=sys.stderr)
    return 0 if passed else 1
