"""The trajectory store's SQLite schema: the numbered migrations that build it (applied in order
when a store opens, `assistant.store.trajectory_db.Store._migrate`), the columns stored under a
field's own name, and the per-turn tamper/flag signals read from the stored run results.

The tables are described in docs/data.md.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
    CREATE TABLE problems (
        hash TEXT PRIMARY KEY, id TEXT NOT NULL, json TEXT NOT NULL, added_at REAL NOT NULL);
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY, problem_id TEXT NOT NULL, problem_hash TEXT NOT NULL REFERENCES problems(hash),
        model TEXT NOT NULL, adapter_version TEXT, source TEXT NOT NULL, started_at REAL NOT NULL,
        ended_at REAL, status TEXT NOT NULL, error TEXT, meta_json TEXT NOT NULL DEFAULT '{}');
    CREATE TABLE turns (
        session_id TEXT NOT NULL REFERENCES sessions(id), turn_index INTEGER NOT NULL,
        messages_json TEXT NOT NULL, reply TEXT NOT NULL, program TEXT,
        public_result_json TEXT, hidden_result_json TEXT,
        public_pass_rate REAL NOT NULL, hidden_pass_rate REAL NOT NULL,
        feedback TEXT NOT NULL, feedback_message TEXT NOT NULL,
        tokens INTEGER NOT NULL DEFAULT 0, latency_s REAL NOT NULL DEFAULT 0,
        author TEXT NOT NULL, meta_json TEXT NOT NULL DEFAULT '{}', created_at REAL NOT NULL,
        PRIMARY KEY (session_id, turn_index));
    """,
    ),
    (
        2,
        """
    CREATE INDEX sessions_by_problem ON sessions(problem_id, model, source);
    CREATE INDEX sessions_by_start ON sessions(started_at);
    CREATE INDEX problems_by_id ON problems(id, added_at);
    """,
    ),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]
# The columns stored as they are under the same name as a field of SessionRecord / Turn.
SESSION_COLUMNS = (
    "id",
    "problem_id",
    "problem_hash",
    "model",
    "adapter_version",
    "source",
    "started_at",
    "ended_at",
    "status",
    "error",
)
TURN_COLUMNS = (
    "reply",
    "program",
    "public_pass_rate",
    "hidden_pass_rate",
    "feedback",
    "feedback_message",
    "tokens",
    "latency_s",
    "author",
)


# Per turn, from the stored RunResult JSON (sandbox.api.RunResult.to_dict): 1 if either run was
# tampered (a hidden canary passed) / carried static flags, else 0.
RUN_SIGNALS = (
    "(COALESCE(json_extract(t.public_result_json, '$.tampered'), 0)"
    " OR COALESCE(json_extract(t.hidden_result_json, '$.tampered'), 0)) AS tampered,"
    " (COALESCE(json_array_length(t.public_result_json, '$.flags'), 0)"
    " + COALESCE(json_array_length(t.hidden_result_json, '$.flags'), 0) > 0) AS flagged"
)
