"""Export and import of trajectories as JSONL in the reference implementation's record
shape: one record per problem,

    id, instruction, test_cases, public_test_cases, hidden_test_cases   (tests as JSON text)
    conversations       one message list per session: system, user, then per turn the
                        assistant reply (text after </think>) and the feedback user turn
    public_pass_rates   [turn][session]   (the reference's orientation)
    all_pass_rates      [session][turn]   (pass rate on the hidden tests)

Sessions that stopped early (every public test passed) are padded to the longest session
by carrying their last pass rates forward; their conversations are not padded. Stdio
tests are written as {"inputs", "outputs"}; function tests as {"asserts": [...]}.
A `cobalt` field carries what the reference shape lacks (the full problem, per-session
model/adapter/status, per-turn results, tokens and timing), so export -> import -> export
is byte-identical. Records without it (published reference files) import as well.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from itertools import groupby
from typing import Any, Iterable, Iterator, TextIO

from assistant.loop import prompts
from assistant.messages import extract
from assistant.problems.jsonl import json_lines
from assistant.problems.schema import Problem, ProblemError
from assistant.problems.sources import from_record
from assistant.store.trajectory import PASSED, UNSOLVED, SessionRecord, Turn
from assistant.store.trajectory_db import Store, StoreError
from sandbox.api import RunResult, TestCase

FORMAT_VERSION = 1
TURN_FIELDS = (
    "author",
    "tokens",
    "prompt_tokens",
    "latency_s",
    "temperature",
    "top_p",
    "resamples",
    "repeated",
    "finish_reason",
    "created_at",
    "candidates",
)


def tests_json(tests: list[TestCase], problem: Problem) -> str:
    if problem.kind == "stdio":
        spec: dict[str, Any] = {"inputs": [t.input for t in tests], "outputs": [t.output for t in tests]}
    elif problem.kind == "function":
        spec = {"asserts": [t.code for t in tests], "entry_point": problem.entry_point}
    else:
        spec = {"test_command": problem.test_command, "names": [t.name for t in tests]}
    return json.dumps(spec, ensure_ascii=False)


def _carried(rates: list[float], length: int) -> list[float]:
    return rates + [rates[-1]] * (length - len(rates))


def _turn_meta(turn: Turn) -> dict[str, Any]:
    meta: dict[str, Any] = {k: getattr(turn, k) for k in TURN_FIELDS}
    if prompts.assistant_message(turn.reply)["content"] != turn.reply:
        meta["reply"] = turn.reply
    if prompts.feedback_of(turn.feedback_message) != turn.feedback:
        meta["feedback"] = turn.feedback
    meta["public_result"] = turn.public.to_dict() if turn.public else None
    meta["hidden_result"] = turn.hidden.to_dict() if turn.hidden else None
    return meta


def _session_meta(session: SessionRecord) -> dict[str, Any]:
    return {
        "id": session.id,
        "model": session.model,
        "adapter_version": session.adapter_version,
        "source": session.source,
        "status": session.status,
        "error": session.error,
        "started_at": session.started_at,
        "ended_at": session.ended_at,
        "meta": session.meta,
        "turns": [_turn_meta(t) for t in session.turns],
    }


def record(problem: Problem, sessions: list[SessionRecord]) -> dict[str, Any]:
    """The export record of one problem's sessions (each with at least one turn)."""
    length = max(len(s.turns) for s in sessions)
    public = [_carried([t.public_pass_rate for t in s.turns], length) for s in sessions]
    return {
        "id": problem.id,
        "instruction": sessions[0].turns[0].messages[-1]["content"],
        "test_cases": tests_json(problem.all_tests(), problem),
        "public_test_cases": tests_json(problem.public_tests, problem),
        "hidden_test_cases": tests_json(problem.hidden_tests, problem),
        "conversations": [prompts.style().continued(problem, s.turns) for s in sessions],
        "public_pass_rates": [list(column) for column in zip(*public)],
        "all_pass_rates": [_carried([t.hidden_pass_rate for t in s.turns], length) for s in sessions],
        "cobalt": {
            "version": FORMAT_VERSION,
            "problem": problem.to_dict(),
            "sessions": [_session_meta(s) for s in sessions],
        },
    }


def export_records(store: Store, **filters: Any) -> Iterator[dict[str, Any]]:
    """Records for the stored sessions matching `filters` (see Store.sessions), grouped by
    problem content, sessions without turns left out."""
    sessions = [s for s in store.sessions(with_turns=True, **filters) if s.turns]
    first_seen: dict[str, int] = {}
    for i, s in enumerate(sessions):
        first_seen.setdefault(s.problem_hash, i)
    sessions.sort(key=lambda s: first_seen[s.problem_hash])
    for digest, group in groupby(sessions, key=lambda s: s.problem_hash):
        problem = store.problem_by_hash(digest)
        if problem is not None:
            yield record(problem, list(group))


def write_jsonl(records: Iterable[dict[str, Any]], out: TextIO) -> int:
    count = 0
    for item in records:
        out.write(json.dumps(item, ensure_ascii=False) + "\n")
        count += 1
    return count


# --- import ----------------------------------------------------------------------------


def _rate(table: Any, i: int, j: int) -> float:
    try:
        return float(table[i][j])
    except (IndexError, TypeError, ValueError, KeyError):
        return 0.0


def _session_id(record_id: str, conv: list[dict[str, str]], copy: int) -> str:
    """A session's id when the record names none: its conversation's hash, and for the second and
    later copies of one conversation in the record, which copy (two samples that said the same are
    two sessions; the first copy keeps the id it had, so a file imported before is not imported twice)."""
    blob = json.dumps([record_id, conv] + ([copy] if copy else []), ensure_ascii=False, sort_keys=True)
    return "imp-" + hashlib.sha256(blob.encode()).hexdigest()[:12]


_KINDS: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,)}


def _typed(tm: dict[str, Any], where: str) -> dict[str, Any]:
    """The stored turn fields of `tm`, each of its `Turn` field's type (a `latency_s: "slow"` would be
    stored and break `trajectories show` later); StoreError naming the field otherwise."""
    types = {f.name: str(f.type) for f in dataclasses.fields(Turn)}
    out = {}
    for k in (k for k in TURN_FIELDS if k in tm):
        value, kind = tm[k], types[k]
        base = kind.replace(" | None", "")
        ok = (value is None and kind.endswith("| None")) or (
            all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            if base == "list[int]" and isinstance(value, list)
            else isinstance(value, _KINDS.get(base, ())) and (base == "bool" or not isinstance(value, bool))
        )
        if not ok:
            raise StoreError(f"{where}: the turn field {k!r} must be {kind}, not {value!r}")
        out[k] = value
    return out


def sessions_of(item: dict[str, Any], where: str) -> tuple[Problem, list[SessionRecord]]:
    """Parse one record into its problem and sessions (nothing is written)."""
    try:
        problem = from_record(item, where)
    except ProblemError as exc:
        raise StoreError(str(exc)) from None
    conversations = item.get("conversations")
    if not isinstance(conversations, list):
        raise StoreError(f"{where}: the record has no 'conversations' list")
    extra = item.get("cobalt") if isinstance(item.get("cobalt"), dict) else {}
    metas = extra.get("sessions") or [{} for _ in conversations]
    if len(metas) != len(conversations):
        raise StoreError(f"{where}: {len(conversations)} conversations but {len(metas)} session entries")
    out = []
    copies: dict[str, int] = {}  # how many earlier sessions of this record said exactly the same
    for s, (conv, meta) in enumerate(zip(conversations, metas)):
        if not isinstance(conv, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str) for m in conv
        ):
            raise StoreError(f"{where}: conversation {s} is not a list of {{role, content}} text messages")
        if not isinstance(meta, dict) or not isinstance(meta.get("turns") or [], list):
            raise StoreError(f"{where}: session entry {s} is not an object with a list of turns")
        same = json.dumps(conv, ensure_ascii=False, sort_keys=True)
        copies[same] = copies.get(same, -1) + 1
        try:
            out.append(_session(item, problem, conv, meta, s, where, copies[same]))
        except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a field of another type
            raise StoreError(f"{where}: session {s} has a field of the wrong type ({exc})") from None
    return problem, out


def _session(
    item: dict[str, Any],
    problem: Problem,
    conv: list[dict[str, str]],
    meta: dict[str, Any],
    s: int,
    where: str,
    copy: int = 0,
) -> SessionRecord:
    first = next((i for i, m in enumerate(conv) if m["role"] == "assistant"), None)
    if first is None:
        raise StoreError(f"{where}: conversation {s} has no assistant turn")
    turn_metas = meta.get("turns") or []
    turns = []
    for t, pos in enumerate(range(first, len(conv), 2)):
        if conv[pos]["role"] != "assistant":
            raise StoreError(f"{where}: conversation {s} does not alternate assistant and user turns")
        tm = turn_metas[t] if t < len(turn_metas) else {}
        if not isinstance(tm, dict):
            raise StoreError(f"{where}: conversation {s}'s turn entry {t} is not an object")
        reply = tm.get("reply", conv[pos]["content"])
        feedback_message = conv[pos + 1]["content"] if pos + 1 < len(conv) else ""
        turns.append(
            Turn(
                index=t,
                messages=conv[:pos],
                reply=reply,
                program=extract.code(reply),
                feedback=tm.get("feedback", prompts.feedback_of(feedback_message)),
                feedback_message=feedback_message,
                public_pass_rate=_rate(item.get("public_pass_rates"), t, s),
                hidden_pass_rate=_rate(item.get("all_pass_rates"), s, t),
                public=RunResult.from_dict(tm["public_result"]) if tm.get("public_result") else None,
                hidden=RunResult.from_dict(tm["hidden_result"]) if tm.get("hidden_result") else None,
                **_typed(tm, f"{where}: conversation {s}, turn {t}"),
            )
        )
    last_passed = bool(turns) and turns[-1].public_pass_rate >= 1.0
    return SessionRecord(
        id=str(meta.get("id") or _session_id(problem.id, conv, copy)),
        problem_id=problem.id,
        problem_hash=problem.content_hash(),
        model=meta.get("model") or "unknown",
        source=meta.get("source") or "import",
        status=meta.get("status") or (PASSED if last_passed else UNSOLVED),  # a published record has none
        started_at=float(meta.get("started_at") or 0.0),
        ended_at=meta.get("ended_at"),
        adapter_version=meta.get("adapter_version"),
        error=meta.get("error"),
        meta=meta.get("meta") or {},
        turns=turns,
        problem=problem,
    )


def read_jsonl(lines: Iterable[str], where: str) -> list[SessionRecord]:
    """Every session of a JSONL export; raises StoreError before anything is written."""
    sessions = []
    for here, _, item in json_lines(lines, where, StoreError, must_be="a record"):
        sessions.extend(sessions_of(item, here)[1])
    return sessions


def import_sessions(store: Store, sessions: list[SessionRecord]) -> tuple[int, int]:
    """Write sessions not already stored; returns (added, skipped)."""
    added = skipped = 0
    for session in sessions:
        if store.has_session(session.id):
            skipped += 1
            continue
        try:
            store.insert_session(session)
        except sqlite3.IntegrityError:  # another import stored it meanwhile (its transaction rolled back)
            skipped += 1
            continue
        added += 1
    return added, skipped
