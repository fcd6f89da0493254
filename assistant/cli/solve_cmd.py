"""`cobalt solve PROBLEM`: the headless debugging loop on one problem, printing each turn
as it finishes and a summary (or, with --json, one JSON object on stdout). PROBLEM is a
problem file (FILE or FILE#ID) or HumanEval/N. Exit code 0 when the loop ran (solved or
not), 1 when the model or the sandbox failed."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from assistant.cli.runtime import (add_output_flags, open_client, open_sandbox, positive_int, printer, session_json,
                                   sigterm_as_interrupt)
from assistant.problem_loader import load_problem
from assistant.recorder import record
from assistant.session import Session
from assistant.settings import LoopSettings
from assistant.store import Store
from assistant.trajectory import PASSED, UNSOLVED


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("solve", help="run the debugging loop on one problem, headless")
    parser.add_argument("problem", metavar="PROBLEM", help="a problem file (FILE or FILE#ID) or HumanEval/N")
    parser.add_argument("--turns", type=positive_int, help="most turns (default: config loop.turns)")
    parser.add_argument("--model", help="model name or litellm id (default: config model.name)")
    add_output_flags(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, cfg: dict[str, Any]) -> int:
    problem = load_problem(args.problem)
    settings = LoopSettings.from_config(cfg, turns=args.turns)
    client = open_client(cfg, args.model, quiet=args.json)
    sandbox = open_sandbox(cfg)
    live = printer(args, settings.turns, len(problem.public_tests), len(problem.hidden_tests))
    try:
        with Store.open(cfg) as store, sigterm_as_interrupt():
            session = record(Session(problem, client, sandbox, settings, source="cli", stream=live is not None), store)
            if not args.json:
                print(f"{problem.id}: {problem.title} · {problem.kind} · model {client.display_name}"
                      f" · up to {settings.turns} turns")
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
    print(f"\n{verdict} after {len(turns)} turn(s); hidden pass rate "
          f"{last.hidden_pass_rate:.0%}; session {session.id}")
    if last.program:
        print("\nfinal program:\n" + last.program.rstrip())
