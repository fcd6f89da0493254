"""The trajectory store: one SQLite file (WAL mode) in the data dir, `trajectories.db`.

Tables (docs/data.md): `problems` (one row per distinct problem content, keyed by its
hash), `sessions`, `turns`, and `schema_version`, brought up to date by the numbered steps
in `db_schema.MIGRATIONS` when the store opens. Every write is its own `BEGIN IMMEDIATE` transaction,
so a crash loses at most the turn in flight and several processes may write at once
(each waits for the others through `busy_timeout`). One Store may be shared by threads.

Export/import of JSONL lives in `assistant.loop.jsonl_export`; solve-rate statistics here.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from assistant.errors import UserError
from assistant.problems.schema import Problem
from assistant.settings import resolved
from assistant.store.db_schema import MIGRATIONS, RUN_SIGNALS, SCHEMA_VERSION, SESSION_COLUMNS, TURN_COLUMNS
from assistant.store.trajectory import RUNNING, SessionRecord, Turn, new_session_id
from sandbox.api import RunResult

if TYPE_CHECKING:
    from assistant.settings import PathsSettings

DB_NAME = "trajectories.db"
BUSY_TIMEOUT_MS = 60_000


class StoreError(UserError):
    """The store cannot be opened or a record is missing; one sentence for the user."""


def default_path(paths: PathsSettings | None = None) -> Path:
    return resolved(paths).data_dir / DB_NAME


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _result_json(result: RunResult | None) -> str | None:
    return None if result is None else _dump(result.to_dict())


def _result(text: str | None) -> RunResult | None:
    return None if text is None else RunResult.from_dict(json.loads(text))


def _insert(db: sqlite3.Connection, table: str, row: dict[str, Any]) -> None:
    """INSERT one row (column -> value) into `table`."""
    marks = ", ".join("?" * len(row))
    db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", tuple(row.values()))


def _session_row(record: SessionRecord) -> dict[str, Any]:
    """The sessions row of a record."""
    return {**{column: getattr(record, column) for column in SESSION_COLUMNS}, "meta_json": _dump(record.meta)}


class Store:
    """A connection to the trajectory database; `Store(path)` or `Store.open(paths)`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            self._db.row_factory = sqlite3.Row
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = FULL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open the trajectory store {self.path}: {exc}") from None

    @classmethod
    def open(cls, paths: PathsSettings | None = None) -> "Store":
        """The store in the data directory of `paths` (default: resolved from the environment)."""
        return cls(default_path(paths))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error), serialised across threads."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    # --- schema -------------------------------------------------------------------------

    def schema_version(self) -> int:
        rows = self._query("SELECT name FROM sqlite_master WHERE type='table' AND name='schema_version'")
        if not rows:
            return 0
        row = self._query("SELECT MAX(version) AS v FROM schema_version")
        return int(row[0]["v"] or 0)

    def _migrate(self) -> None:
        with self.transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at REAL NOT NULL)")
            current = db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
            if current > SCHEMA_VERSION:
                raise StoreError(
                    f"the store {self.path} has schema version {current}, newer than "
                    f"this Cobalt's {SCHEMA_VERSION}; upgrade Cobalt"
                )
            for version, script in MIGRATIONS:
                if version > current:
                    for statement in filter(str.strip, script.split(";")):
                        db.execute(statement)
                    db.execute("INSERT INTO schema_version VALUES (?, ?)", (version, time.time()))

    # --- writes -------------------------------------------------------------------------

    @staticmethod
    def _put_problem(db: sqlite3.Connection, problem: Problem) -> str:
        digest = problem.content_hash()
        db.execute(
            "INSERT OR IGNORE INTO problems (hash, id, json, added_at) VALUES (?, ?, ?, ?)",
            (digest, problem.id, _dump(problem.to_dict()), time.time()),
        )
        return digest

    def start_session(
        self,
        problem: Problem,
        model: str,
        source: str,
        *,
        adapter_version: str | None = None,
        session_id: str | None = None,
        started_at: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> str:
        sid = session_id or new_session_id()
        started = time.time() if started_at is None else started_at
        with self.transaction() as db:
            digest = self._put_problem(db, problem)
            record = SessionRecord(
                sid,
                problem.id,
                digest,
                model,
                source,
                RUNNING,
                started,
                adapter_version=adapter_version,
                meta=meta or {},
            )
            _insert(db, "sessions", _session_row(record))
        return sid

    def append_turn(self, session_id: str, turn: Turn) -> None:
        """Write one finished turn in its own transaction."""
        with self.transaction() as db:
            self._insert_turn(db, session_id, turn)

    @staticmethod
    def _insert_turn(db: sqlite3.Connection, session_id: str, turn: Turn) -> None:
        row = {
            "session_id": session_id,
            "turn_index": turn.index,
            "messages_json": _dump(turn.messages),
            **{column: getattr(turn, column) for column in TURN_COLUMNS},
            "public_result_json": _result_json(turn.public),
            "hidden_result_json": _result_json(turn.hidden),
            "meta_json": _dump(turn.meta()),
            "created_at": turn.created_at or time.time(),
        }
        _insert(db, "turns", row)

    def insert_session(self, record: SessionRecord) -> None:
        """Write a whole session (its problem, row and turns) in one transaction (import)."""
        if record.problem is None:
            raise StoreError(f"session {record.id} has no problem to store")
        with self.transaction() as db:
            digest = self._put_problem(db, record.problem)
            _insert(db, "sessions", {**_session_row(record), "problem_hash": digest})
            for turn in record.turns:
                self._insert_turn(db, record.id, turn)

    def set_model(self, session_id: str, model: str, adapter_version: str | None) -> None:
        """Name the model of a session stored before any model took part (its first turns the
        person's own), once the model's first turn arrives."""
        with self.transaction() as db:
            db.execute(
                "UPDATE sessions SET model = ?, adapter_version = ? WHERE id = ?", (model, adapter_version, session_id)
            )

    def set_status(self, session_id: str, status: str, error: str | None = None, ended_at: float | None = None) -> None:
        """Record how a session ended (or `running` again when it is resumed)."""
        ended = None if status == RUNNING else (time.time() if ended_at is None else ended_at)
        with self.transaction() as db:
            db.execute(
                "UPDATE sessions SET status = ?, error = ?, ended_at = ? WHERE id = ?",
                (status, error, ended, session_id),
            )

    # --- reads --------------------------------------------------------------------------

    def problem(self, problem_id: str) -> Problem | None:
        """The most recently stored version of a problem."""
        rows = self._query("SELECT json FROM problems WHERE id = ? ORDER BY added_at DESC LIMIT 1", (problem_id,))
        return Problem.from_dict(json.loads(rows[0]["json"]), problem_id, check_paths=False) if rows else None

    def problem_by_hash(self, digest: str) -> Problem | None:
        rows = self._query("SELECT json FROM problems WHERE hash = ?", (digest,))
        return Problem.from_dict(json.loads(rows[0]["json"]), digest[:12], check_paths=False) if rows else None

    def resolve_id(self, prefix: str) -> str:
        """A full session id from a unique prefix of it."""
        rows = self._query(
            "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 2",
            (prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",),
        )
        rows = [r for r in rows if r["id"].startswith(prefix)]
        if not rows or not prefix:
            raise StoreError(f"no stored session has the id {prefix!r}")
        if len(rows) > 1:
            raise StoreError(f"the id {prefix!r} matches several sessions; give more characters")
        return rows[0]["id"]

    def session(self, session_id: str, with_problem: bool = True) -> SessionRecord:
        sid = self.resolve_id(session_id)
        row = self._query("SELECT * FROM sessions WHERE id = ?", (sid,))[0]
        record = self._session_record(row)
        record.turns = self.turns(sid)
        record.turn_count = len(record.turns)
        if with_problem:
            record.problem = self.problem_by_hash(record.problem_hash)
        return record

    def turns(self, session_id: str) -> list[Turn]:
        rows = self._query("SELECT * FROM turns WHERE session_id = ? ORDER BY turn_index", (session_id,))
        return [self._turn(r) for r in rows]

    def sessions(
        self,
        *,
        problem_id: str | None = None,
        model: str | None = None,
        source: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        with_turns: bool = False,
    ) -> list[SessionRecord]:
        """Sessions, oldest first, filtered by the given fields."""
        where, args = [], []
        for column, value in (("problem_id", problem_id), ("model", model), ("source", source), ("status", status)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = "SELECT * FROM sessions" + (f" WHERE {' AND '.join(where)}" if where else "")
        if limit is None:
            rows = self._query(sql + " ORDER BY started_at, id", tuple(args))
        else:  # the newest `limit`, still listed oldest first
            rows = self._query(sql + f" ORDER BY started_at DESC, id DESC LIMIT {int(limit)}", tuple(args))[::-1]
        records = [self._session_record(r) for r in rows]
        # SQLite takes the bare columns of an aggregate query from the row holding MAX().
        last = {
            r["session_id"]: r
            for r in self._query(
                "SELECT session_id, MAX(turn_index) AS last, COUNT(*) AS n, public_pass_rate, hidden_pass_rate"
                " FROM turns GROUP BY session_id"
            )
        }
        for record in records:
            row = last.get(record.id)
            if row is not None:
                record.turn_count = row["n"]
                record.last_pass_rates = (row["public_pass_rate"], row["hidden_pass_rate"])
            if with_turns:
                record.turns = self.turns(record.id)
        return records

    def turn_rates(
        self, *, model: str | None = None, source: str | None = None, problem_id: str | None = None
    ) -> list[sqlite3.Row]:
        """(session id, problem_id, model, adapter_version, status, turn_index,
        public_pass_rate, hidden_pass_rate, tampered, flagged) rows, one per turn (turn_index
        NULL for a session without turns), ordered by session then turn; for statistics.
        tampered / flagged (0 or 1): the turn's public or hidden run was tampered / had flags."""
        where, args = [], []
        for column, value in (("s.model", model), ("s.source", source), ("s.problem_id", problem_id)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        return self._query(
            "SELECT s.id AS session_id, s.problem_id, s.model, s.adapter_version, s.status, t.turn_index,"
            " t.public_pass_rate, t.hidden_pass_rate, "
            + RUN_SIGNALS
            + " FROM sessions s LEFT JOIN turns t ON t.session_id = s.id"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + " ORDER BY s.started_at, s.id, t.turn_index",
            tuple(args),
        )

    def model_of(self, session_id: str) -> str | None:
        """The model a stored session names (None when it is not stored), without its turns."""
        rows = self._query("SELECT model FROM sessions WHERE id = ?", (session_id,))
        return str(rows[0]["model"]) if rows else None

    def has_session(self, session_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM sessions WHERE id = ?", (session_id,)))

    def counts(self) -> tuple[int, int]:
        sessions = self._query("SELECT COUNT(*) AS n FROM sessions")[0]["n"]
        turns = self._query("SELECT COUNT(*) AS n FROM turns")[0]["n"]
        return int(sessions), int(turns)

    def integrity_ok(self) -> bool:
        return self._query("PRAGMA integrity_check")[0][0] == "ok"

    @staticmethod
    def _session_record(row: sqlite3.Row) -> SessionRecord:
        return SessionRecord(**{column: row[column] for column in SESSION_COLUMNS}, meta=json.loads(row["meta_json"]))

    @staticmethod
    def _turn(row: sqlite3.Row) -> Turn:
        meta = json.loads(row["meta_json"])
        return Turn(
            index=row["turn_index"],
            messages=json.loads(row["messages_json"]),
            **{column: row[column] for column in TURN_COLUMNS},
            public=_result(row["public_result_json"]),
            hidden=_result(row["hidden_result_json"]),
            prompt_tokens=meta.get("prompt_tokens") or 0,
            temperature=meta.get("temperature"),
            top_p=meta.get("top_p"),
            resamples=meta.get("resamples") or 0,
            repeated=bool(meta.get("repeated")),
            finish_reason=meta.get("finish_reason"),
            candidates=list(meta.get("candidates") or []),
            created_at=row["created_at"],
        )
