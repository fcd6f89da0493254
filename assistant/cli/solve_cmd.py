"""`cobalt solve PROBLEM`: the headless debugging loop on one problem, printing each turn
as it finishes and a summary (or, with --json, one JSON object on stdout). PROBLEM is a
problem file (FILE or FILE#ID) or HumanEval/N. Exit code 0 when the loop ran (solved or
not), 1 when the model or the sandbox failed."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from assistant.cli.loop_output import add_output_flags, printer, session_json, sigterm_as_interrupt
from assistant.console import positive_int, to_stderr
from assistant.loop.recorder import record
from assistant.loop.session import Session
from assistant.problems.resolve import load_problem
from assistant.runtime import open_client, open_sandbox, open_store
from assistant.store.trajectory import PASSED, UNSOLVED

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("solve", help="run the debugging loop on one problem, headless")
    parser.add_argument("problem", metavar="PROBLEM", help="a problem file (FILE or FILE#ID) or HumanEval/N")
    parser.add_argument("--turns", type=positive_int, help="most turns (default: config loop.turns)")
    parser.add_argument("--model", help="model name or litellm id (default: config model.name)")
    parser.add_argument(
        "--candidates",
        type=int,
        choices=range(1, 17),
        metavar="N",
        help="replies tried at once per turn, the one passing the most public tests kept (default: loop.candidates)",
    )
    add_output_flags(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    problem = load_problem(args.problem)
    loop = settings.loop.with_turns(args.turns)
    if args.candidates:
        loop = loop.merged({"candidates": args.candidates})
    client = open_client(settings, args.model, progress=None if args.json else to_stderr)
    sandbox = open_sandbox(settings)
    live = printer(args, loop.turns, len(problem.public_tests), len(problem.hidden_tests))
    try:
        with open_store(settings) as store, sigterm_as_interrupt():
            session = record(Session(problem, client, sandbox, loop, source="cli", stream=live is not None), store)
            if not args.json:
                print(
                    f"{problem.id}: {problem.title} · {problem.kind} · model {client.display_name}"
                    f" · up to {loop.turns} turns"
                )
            if live is not None:
                session.subscribe(live)
            status = session.run()
    finally:
        sandbox.close()
    if args.json:
        print(json.dumps(session_json(session)))
    else:
        _summary(session)
    if status not in (PASSED, UNSOLVED):
        print(f"cobalt: error: {session.error}", file=sys.stderr)
        return 1
    return 0


def _summary(session: Session) -> None:
    turns = session.turns
    if not turns:
        return
    last = turns[-1]
    verdict = "all public tests pass" if session.status == PASSED else f"status {session.status}"
    print(f"\n{verdict} after {len(turns)} turn(s); hidden pass rate {last.hidden_pass_rate:.0%}; session {session.id}")
    if last.program:
        print("\nfinal program:\n" + last.program.rstrip())
