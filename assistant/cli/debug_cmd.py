"""`cobalt debug [FILE] --test "CMD"`: fix a file of your own project until CMD passes in the
sandbox. The failing tests are read one by one (JUnit), the implicated functions are shown to the
model in full and the rest of the file as an outline. First, small edits of the implicated
functions are tried with the test command (debug.search; --no-search skips it); then the model
answers with an edit (debug.edit_format: `functions` or `search_replace`; `whole_file` is the old
whole-file answer, kept to compare); the session comes from `assistant.debug.open_session`.
Without FILE, the file comes from the failing frames. Prints the diff; writes it only with --apply
(a backup is kept, `cobalt debug --undo` restores it; a git file with uncommitted changes needs
--force). `--resume last|ID` continues a stored debug session. Exit 0 when the tests pass.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from assistant.cli.loop_output import add_output_flags, printer, session_json, sigterm_as_interrupt
from assistant.console import positive_int, seconds, to_stderr
from assistant.debug import failures as fails
from assistant.debug.applied import apply_change, journal_dir, undo_last
from assistant.debug.edits import FORMATS
from assistant.debug.fix_file import best_turn, debug_problem, probe_problem, project_root, unified_diff
from assistant.debug.localize import pick_target
from assistant.debug.open_session import debug_settings, open_debug_session
from assistant.debug.project_runs import LimitedRunner, baseline_run, for_file
from assistant.errors import UserError
from assistant.loop.recorder import HUMAN, record
from assistant.loop.session import Session
from assistant.problems.schema import Problem
from assistant.runtime import open_client, open_sandbox, open_store
from assistant.settings import Settings
from assistant.store.trajectory import RUNNING
from sandbox.api import RunResult

PROBE_FILE = ".cobalt-probe.py"  # written into the sandbox's copy only, to run the tests unchanged


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("debug", help="fix a file of a local project until its tests pass")
    parser.add_argument("file", metavar="FILE", nargs="?", help="the Python file to fix (default: from the failures)")
    parser.add_argument("--test", metavar="CMD", help='the test command, e.g. "python -m pytest -q tests/test_x.py"')
    parser.add_argument("--project", help="the project root (default: nearest dir with pyproject.toml, .git, ...)")
    parser.add_argument("--turns", type=positive_int, help="most turns (default: config loop.turns)")
    parser.add_argument(
        "--deadline",
        type=seconds,
        metavar="SECONDS",
        help="no model turn after the first starts unless it can end within SECONDS of the start "
        "(default: debug.deadline_s; 0: take every turn)",
    )
    parser.add_argument("--model", help="model name or litellm id (default: config model.name)")
    parser.add_argument(
        "--edit-format", choices=list(FORMATS), help="how the model answers (default: debug.edit_format)"
    )
    parser.add_argument(
        "--candidates",
        type=int,
        choices=range(1, 17),
        metavar="N",
        help="edits tried per turn, side by side; the one passing the most tests is kept (default: debug.candidates)",
    )
    parser.add_argument(
        "--no-search", action="store_true", help="do not try small edits before asking the model (debug.search)"
    )
    parser.add_argument("--apply", action="store_true", help="write the fix to FILE (a backup is kept)")
    parser.add_argument("--force", action="store_true", help="with --apply: write over uncommitted git changes")
    parser.add_argument("--undo", action="store_true", help="restore the file of the last applied fix")
    parser.add_argument("--resume", metavar="last|ID", help="continue a stored debug session")
    add_output_flags(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    try:
        return _run(args, settings)
    except UserError as exc:
        if not args.json:
            raise
        print(json.dumps({"status": "error", "passed": False, "error": str(exc), "diff": "", "applied": False}))
        return 1
    except Exception as exc:  # --json promises a result object; the message still names the fault
        if not args.json:
            raise
        error = f"internal error: {type(exc).__name__}: {exc}"
        print(json.dumps({"status": "error", "passed": False, "error": error, "diff": "", "applied": False}))
        return 1


def _journal(settings: Settings) -> Path:
    return journal_dir(settings.paths.data_dir)


def _run(args: argparse.Namespace, settings: Settings) -> int:
    if args.undo:
        message = undo_last(_journal(settings))
        print(json.dumps({"status": "undone", "message": message}) if args.json else message)
        return 0
    if args.resume:
        return _resume(args, settings)
    if not args.test or not args.test.strip():
        raise UserError('the test command is empty; pass it with --test "python -m pytest -q"')
    file = Path(args.file) if args.file else None
    if file is not None and not file.is_file():
        raise UserError(f"{file}: no such file")
    root = Path(args.project).resolve() if args.project else project_root(file) if file else Path.cwd().resolve()
    say = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    sandbox = open_sandbox(settings)
    try:
        runner = LimitedRunner.of(sandbox, settings.sandbox.limits, settings.debug)
        before = None
        if file is None:  # the tests run once, unchanged: their failing frames name the file, each
            probe = baseline_run(runner, probe_problem(root, args.test, PROBE_FILE), follow="*")  # test its lines
            target = pick_target(fails.failures(probe))
            if target is None:
                raise UserError(_no_target(probe, args.test))
            file = root / target
            say(f"the failing tests point at {target}")
            before = for_file(probe, target)
        problem = debug_problem(file, args.test, root)
        before = before or baseline_run(runner, problem)
        if before.all_passed:
            say(f"the tests already pass ({fails.summary(before)}); nothing to fix")
            if args.json:
                print(
                    json.dumps(
                        {
                            "status": "already_passing",
                            "passed": True,
                            "session_id": None,
                            "turns": [],
                            "diff": "",
                            "applied": False,
                        }
                    )
                )
            return 0
        passed = sum(t.passed for t in before.tests)
        say(f"{problem.target_file} in {problem.project_dir}: {passed}/{len(before.tests)} tests pass now")
        session = _session(args, settings, problem, runner, before)
        interrupted = _go(args, settings, session)
    finally:
        sandbox.close()
    return _report(args, settings, file, problem.starter_code, session, interrupted)


def _no_target(result: RunResult, test_command: str) -> str:
    error = fails.run_error(result, test_command)
    if error is not None:
        return error
    if result.all_passed:
        return f"the tests already pass ({fails.summary(result)}); nothing to fix"
    return "the failing tests do not point at a project file other than the tests; name the file to fix"


def _session(
    args: argparse.Namespace, settings: Settings, problem: Problem, box: LimitedRunner, before: RunResult
) -> Session:
    client = open_client(settings, args.model, progress=None if args.json else to_stderr, keep_docstrings=True)
    debug = debug_settings(settings, args.edit_format, args.candidates, False if args.no_search else None)
    if args.deadline is not None:
        debug = debug.model_copy(update={"deadline_s": args.deadline})
    loop = settings.loop.with_turns(args.turns or settings.debug.turns)
    return open_debug_session(
        problem, client, box, settings, before, loop=loop, debug=debug, source="debug", stream=not args.json
    )


def _go(args: argparse.Namespace, settings: Settings, session: Session, more_turns: int | None = None) -> bool:
    """Run the session, stored as it goes; a resumed one (`more_turns`) is marked running again.
    True when Ctrl-C (or SIGTERM) stopped it: the turns so far are stored and still reported."""
    limit = None if more_turns is None else len(session.turns) + more_turns
    live = printer(args, limit or session.settings.turns, 0, 0)
    with open_store(settings) as store, sigterm_as_interrupt():
        if more_turns is not None:
            store.set_status(str(session.id), RUNNING)
        record(session, store)
        if live is not None:
            session.subscribe(live)
        try:
            session.run(max_turns=limit)
        except KeyboardInterrupt:
            return True
    return False


def _resume(args: argparse.Namespace, settings: Settings) -> int:
    with open_store(settings) as store:
        found = store.sessions(source="debug")
        if not found:
            raise UserError("there is no stored debug session to resume")
        record_ = store.session(found[-1].id if args.resume == "last" else args.resume)
    problem = record_.problem
    if problem is None or problem.kind != "pytest" or not problem.target_file:
        raise UserError(f"session {record_.id} is not a debug session")
    file = Path(str(problem.project_dir)) / str(problem.target_file)
    sandbox = open_sandbox(settings)
    try:
        runner = LimitedRunner.of(sandbox, settings.sandbox.limits, settings.debug)
        before = baseline_run(runner, problem)
        args.edit_format = args.edit_format or (record_.meta or {}).get("edit_format")
        session = _session(args, settings, problem, runner, before)
        now = (getattr(session.client, "display_name", None), session.adapter_version)
        if record_.model != HUMAN and (record_.model, record_.adapter_version) != now:
            was = record_.model + (f" with adapter {record_.adapter_version}" if record_.adapter_version else "")
            raise UserError(
                f"session {record_.id[:8]} was run by {was}; resume it with that model (--model), "
                "so that its turns are not stored under another model's name"
            )
        session.id, session.turns = record_.id, list(record_.turns)
        more = args.turns or settings.debug.turns or settings.loop.turns
        interrupted = _go(args, settings, session, more_turns=more)
    finally:
        sandbox.close()
    return _report(args, settings, file, problem.starter_code, session, interrupted)


def _report(
    args: argparse.Namespace,
    settings: Settings,
    file: Path,
    original: str,
    session: Session,
    interrupted: bool = False,
) -> int:
    """The best turn's fix (the diff, its tests) and, with --apply, the file written. An
    interrupted run is reported as far as it got and writes nothing."""
    best = best_turn(session.turns, getattr(session, "first_run", None), str(session.problem.test_command))
    fixed = best.program if best else None
    diff = unified_diff(original, fixed, str(session.problem.target_file)) if fixed else ""
    passed = bool(best and best.passed_public)
    backup = (
        apply_change(file, fixed, _journal(settings), original=original, dirty_ok=args.force)
        if args.apply and passed and fixed and diff and not interrupted
        else None
    )
    if args.json:
        print(
            json.dumps(
                session_json(session)
                | {
                    "passed": passed,
                    "diff": diff,
                    "applied": backup is not None,
                    "backup": str(backup) if backup else None,
                    "file": str(file),
                    "fixed_by": best.author if passed and best else None,
                    "search": session.meta.get("search"),
                    "deadline": session.meta.get("deadline"),
                    "interrupted": interrupted,
                }
            )
        )
    else:
        print(
            f"\n{'interrupted; ' if interrupted else ''}"
            f"{'the tests pass' if passed else 'no fix passes every test'} after {len(session.turns)} "
            f"turn(s); session {session.id}{'; ' + session.error if session.error else ''}"
        )
        stopped = session.meta.get("deadline")
        if stopped and not passed:
            print(
                f"stopped after {stopped['elapsed']:.0f} s: another model turn would end past the "
                f"{stopped['seconds']:g} s deadline (--deadline 0 takes every turn)"
            )
        if passed and best and best.author == "search":
            print(f"found by trying small edits of the failing code ({session.meta['search']['found']})")
            for other in session.meta["search"].get("plausible") or []:
                print(f"  another edit that also passes every test, ranked below it: {other}")
        if diff:
            print("\n" + diff, end="")
        if backup:
            print(f"\nwrote {file} (backup: {backup}); `cobalt debug --undo` restores it")
        elif passed and diff:
            print(f"\nrun again with --apply to write this fix to {file}")
    if interrupted:
        print(f"cobalt: interrupted; {file} is unchanged", file=sys.stderr)
        return 130
    if args.apply and not passed:
        print(f"cobalt: error: no passing fix was found; {file} is unchanged", file=sys.stderr)
    return 0 if passed else 1
