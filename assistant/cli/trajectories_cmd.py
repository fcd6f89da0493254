"""`cobalt trajectories list|show|export|import|stats`: read, move and summarise the
stored sessions. `--json` on list, show and stats prints one JSON document on stdout."""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.console import action_parsers, add_action, positive_int
from assistant.errors import UserError
from assistant.loop import jsonl_export
from assistant.runtime import open_store
from assistant.store import atomic
from assistant.store.stats import stats
from assistant.store.trajectory import SOURCES, STATUSES, SessionRecord
from assistant.store.trajectory_db import StoreError

if TYPE_CHECKING:
    from assistant.settings import Settings


def _filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--problem", help="only sessions on this problem id")
    parser.add_argument("--model", help="only sessions of this model")
    parser.add_argument("--source", choices=SOURCES, help="only sessions from this source")


def register(sub: argparse._SubParsersAction) -> None:
    actions = action_parsers(sub, "trajectories", "list, show, export, import stored sessions")
    p = add_action(actions, "list", _list, "list sessions, newest last")
    _filters(p)
    p.add_argument("--status", choices=STATUSES)
    p.add_argument("--limit", type=positive_int, default=50, help="newest N sessions (default 50)")
    p.add_argument("--json", action="store_true")
    p = add_action(actions, "show", _show, "show one session turn by turn")
    p.add_argument("session_id", metavar="ID", help="a session id or a unique prefix of it")
    p.add_argument("--json", action="store_true")
    p = add_action(actions, "export", _export, "write sessions as JSONL in the reference record shape")
    _filters(p)
    p.add_argument("--out", "-o", help="output file (default: stdout)")
    p = add_action(actions, "import", _import, "import a JSONL file of records (ours or the reference's)")
    p.add_argument("file", metavar="FILE")
    p = add_action(actions, "stats", _stats, "sessions, turns and solve rate per turn, per model/adapter")
    _filters(p)
    p.add_argument("--json", action="store_true")


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "-"


def _list(args: argparse.Namespace, settings: Settings) -> int:
    with open_store(settings) as store:
        rows = store.sessions(
            problem_id=args.problem, model=args.model, source=args.source, status=args.status, limit=args.limit
        )
    if args.json:
        print(json.dumps([r.summary() for r in rows]))
        return 0
    if not rows:
        print("no stored sessions")
        return 0
    print(f"{'ID':16}  {'STARTED':16}  {'PROBLEM':24}  {'MODEL':22}  {'SOURCE':7}  {'STATUS':13}  TURNS  HIDDEN")
    for r in rows:
        s = r.summary()
        print(
            f"{r.id:16}  {_when(r.started_at):16}  {r.problem_id[:24]:24}  {r.model[:22]:22}  {r.source:7}"
            f"  {r.status:13}  {s['turns']:5}  {s['hidden_pass_rate']:6.0%}"
        )
    return 0


def _show(args: argparse.Namespace, settings: Settings) -> int:
    with open_store(settings) as store:
        record = store.session(args.session_id)
    if args.json:
        out = record.summary() | {
            "meta": record.meta,
            "problem": record.problem.to_dict() if record.problem else None,
            "turns": [_turn_json(t) for t in record.turns],
        }
        print(json.dumps(out))
        return 0
    _print_session(record)
    return 0


def _turn_json(turn: Any) -> dict[str, Any]:
    return turn.summary() | {
        "messages": turn.messages,
        "reply": turn.reply,
        "program": turn.program,
        "feedback": turn.feedback,
        "temperature": turn.temperature,
        "public_result": turn.public.to_dict() if turn.public else None,
        "hidden_result": turn.hidden.to_dict() if turn.hidden else None,
    }


def _print_session(record: SessionRecord) -> None:
    print(
        f"session {record.id} · problem {record.problem_id} · model {record.model}"
        f"{' · adapter ' + record.adapter_version if record.adapter_version else ''}"
    )
    print(
        f"source {record.source} · status {record.status} · started {_when(record.started_at)}"
        f"{' · error: ' + record.error if record.error else ''}"
    )
    for turn in record.turns:
        print(
            f"\n── turn {turn.index + 1} ({turn.author}) · {turn.status} · public {turn.public_pass_rate:.0%}"
            f" · hidden {turn.hidden_pass_rate:.0%} · {turn.tokens} tokens · {turn.latency_s:.1f} s"
            f"{f' · resampled {turn.resamples}x' if turn.resamples else ''}"
        )
        print(turn.program.rstrip() if turn.program else "(no code block in the reply)")
        print("── feedback:")
        print(turn.feedback)


def _export(args: argparse.Namespace, settings: Settings) -> int:
    filters = {"problem_id": args.problem, "model": args.model, "source": args.source}
    with open_store(settings) as store:
        items = list(jsonl_export.export_records(store, **filters))
    if args.out:
        text = io.StringIO()
        count = jsonl_export.write_jsonl(items, text)
        try:  # whole or not at all: an earlier export there is never left cut short
            atomic.write_text(Path(args.out), text.getvalue())
        except OSError as exc:
            raise UserError(f"cannot write {args.out} ({exc.strerror or exc})") from None
        print(
            f"wrote {count} record(s) ({sum(len(i['conversations']) for i in items)} sessions) to {args.out}",
            file=sys.stderr,
        )
    else:
        jsonl_export.write_jsonl(items, sys.stdout)
    return 0


def _import(args: argparse.Namespace, settings: Settings) -> int:
    path = Path(args.file)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: cannot be read ({exc})") from None
    sessions = jsonl_export.read_jsonl(lines, str(path))  # validates everything before writing
    with open_store(settings) as store:
        added, skipped = jsonl_export.import_sessions(store, sessions)
    print(f"imported {added} session(s); {skipped} already stored")
    return 0


def _stats(args: argparse.Namespace, settings: Settings) -> int:
    with open_store(settings) as store:
        result = stats(store, model=args.model, source=args.source, problem_id=args.problem)
    if args.json:
        print(json.dumps(result))
    else:
        print_stats(result)
    return 0


def print_stats(result: dict[str, Any]) -> None:
    print(f"{result['sessions']} sessions · {result['turns']} turns · {result['problems']} problems")
    for g in result["groups"]:
        adapter = f" (adapter {g['adapter_version']})" if g["adapter_version"] else ""
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(g["statuses"].items()))
        print(
            f"\n{g['model']}{adapter}: {g['sessions']} sessions, {g['turns']} turns, "
            f"{g['problems']} problems; {statuses}"
        )
        print("  turn          " + "".join(f"{t + 1:>7}" for t in range(len(g["solve_rate_per_turn"]))))
        print("  solved at     " + "".join(f"{r:>7.1%}" for r in g["solve_rate_per_turn"]))
        print("  solved by     " + "".join(f"{r:>7.1%}" for r in g["solved_by_turn"]))
        print("  hidden pass   " + "".join(f"{r:>7.1%}" for r in g["mean_hidden_pass_rate_per_turn"]))
        print("  tampered      " + "".join(f"{r:>7.1%}" for r in g["tampered_rate_per_turn"]))
        print("  flagged       " + "".join(f"{r:>7.1%}" for r in g["flagged_rate_per_turn"]))
