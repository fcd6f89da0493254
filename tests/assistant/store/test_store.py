"""The trajectory store: schema and migrations, reads and writes, concurrent writers,
export -> import byte-identical, statistics."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assistant.loop import jsonl_export, prompts
from assistant.store.db_schema import MIGRATIONS, SCHEMA_VERSION
from assistant.store.stats import stats
from assistant.store.trajectory import PASSED, UNSOLVED, Turn
from assistant.store.trajectory_db import Store, StoreError
from sandbox.api import RunResult, TestResult
from tests.assistant.loop_fakes import graded
from tests.assistant.sample_problems import add_problem, sum_problem

REPO = Path(__file__).resolve().parents[3]


def make_turn(
    index: int, public: float, hidden: float, reply: str = "```python\nprint(1)\n```", earlier: list[Turn] | None = None
) -> Turn:
    """A turn whose context is built from `earlier` turns, as the loop builds it."""
    result = RunResult(
        tests=[
            TestResult(
                "passed" if public == 1 else "failed", input="1", expected="1", actual="1" if public == 1 else "2"
            )
        ]
    )
    context = prompts.style().build(sum_problem(), [(t.reply, t.feedback) for t in earlier or []])
    return Turn(
        index=index,
        messages=context,
        reply=reply,
        program="print(1)\n",
        **graded(f"feedback {index}", result, public, hidden),
        tokens=10 + index,
        latency_s=0.5,
        temperature=0.6,
        top_p=0.95,
        resamples=index % 2,
        created_at=1000.0 + index,
    )


def add_turns(store: Store, sid: str, rates: list[tuple[float, float]], first_reply: str | None = None) -> None:
    turns: list[Turn] = []
    for i, (public, hidden) in enumerate(rates):
        reply = first_reply if i == 0 and first_reply else f"```python\nprint({i})\n```"
        turns.append(make_turn(i, public, hidden, reply, turns))
        store.append_turn(sid, turns[-1])


def test_sessions_and_turns_round_trip(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        sid = store.start_session(sum_problem(), "m", "cli", adapter_version="v3")
        add_turns(store, sid, [(0.5, 0.25), (1.0, 1.0)])
        store.set_status(sid, PASSED)
        record = store.session(sid[:6])
        assert (record.id, record.status, record.adapter_version, record.turn_count) == (sid, PASSED, "v3", 2)
        assert record.problem is not None and record.problem.to_dict() == sum_problem().to_dict()
        first = record.turns[0]
        assert (first.public_pass_rate, first.hidden_pass_rate, first.resamples, first.temperature) == (
            0.5,
            0.25,
            0,
            0.6,
        )
        assert first.public is not None and first.public.tests[0].actual == "2"
        assert record.ended_at is not None and record.turns[1].resamples == 1
        with pytest.raises(sqlite3.IntegrityError):  # a turn index is written once
            store.append_turn(sid, make_turn(1, 0.0, 0.0))
        assert store.turns(sid)[1].public_pass_rate == 1.0
        with pytest.raises(StoreError, match="no stored session"):
            store.session("zzz")
        assert store.sessions(model="other") == [] and len(store.sessions(source="cli")) == 1
        assert store.integrity_ok()


def test_a_v1_store_is_migrated_and_a_newer_one_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at REAL NOT NULL)")
    db.executescript(MIGRATIONS[0][1])
    db.execute("INSERT INTO schema_version VALUES (1, 0)")
    db.execute("INSERT INTO problems VALUES ('h', 'p', '{}', 0)")
    db.commit()
    db.close()
    with Store(path) as store:
        assert store.schema_version() == SCHEMA_VERSION == 2
        names = {r[0] for r in store._query("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"sessions_by_problem", "problems_by_id"} <= names
        assert store._query("SELECT COUNT(*) FROM problems")[0][0] == 1
        assert store._query("PRAGMA journal_mode")[0][0] == "wal"
    db = sqlite3.connect(path)
    db.execute("INSERT INTO schema_version VALUES (99, 0)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer than this Cobalt"):
        Store(path)


WRITER = textwrap.dedent("""
    import sys
    sys.path[:0] = [{repo!r}, {tests!r}]
    from assistant.store.trajectory_db import Store
    from tests.assistant.store.test_store import add_turns
    from tests.assistant.sample_problems import sum_problem
    import os, time
    store = Store(sys.argv[1])
    print("ready", flush=True)
    while not os.path.exists(sys.argv[1] + ".go"):  # start together
        time.sleep(0.005)
    print(time.time())
    for i in range(int(sys.argv[3])):
        sid = store.start_session(sum_problem(), sys.argv[2], "collect")
        add_turns(store, sid, [(0.5, 0.5)] * 3)
        store.set_status(sid, "unsolved")
    print(time.time())
""")


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    Store(path).close()
    script = WRITER.format(repo=str(REPO), tests=str(Path(__file__).parents[1]))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), f"writer-{i}", "60"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    Path(f"{path}.go").touch()
    spans = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        spans.append([float(x) for x in out.split()])
    assert max(s[0] for s in spans) < min(s[1] for s in spans), "the writers did not overlap"
    with Store(path) as store:
        assert store.counts() == (120, 360)
        for i in range(2):
            assert len(store.sessions(model=f"writer-{i}", status=UNSOLVED)) == 60
        assert store.integrity_ok()


def _fill(store: Store) -> None:
    sid = store.start_session(sum_problem(), "model-a", "collect", started_at=10.0)
    add_turns(store, sid, [(0.5, 0.0), (1.0, 1.0)], first_reply="<think>hmm</think>\n```python\nprint(0)\n```")
    store.set_status(sid, PASSED, ended_at=20.0)
    sid = store.start_session(sum_problem(), "model-a", "collect", started_at=11.0)
    add_turns(store, sid, [(0.0, 0.0)] * 3)
    store.set_status(sid, UNSOLVED, ended_at=30.0)
    sid = store.start_session(add_problem(), "model-b", "cli", adapter_version="v1", started_at=12.0)
    add_turns(store, sid, [(1.0, 0.5)])
    store.set_status(sid, PASSED, ended_at=31.0)
    store.start_session(add_problem(), "model-b", "cli", started_at=13.0)  # no turns: not exported


def _export(store: Store) -> str:
    out = io.StringIO()
    jsonl_export.write_jsonl(jsonl_export.export_records(store), out)
    return out.getvalue()


def test_export_import_export_is_byte_identical(tmp_path: Path) -> None:
    with Store(tmp_path / "a.db") as a:
        _fill(a)
        first = _export(a)
    lines = first.splitlines()
    assert len(lines) == 2
    rec = json.loads(lines[0])
    assert list(rec)[:8] == [
        "id",
        "instruction",
        "test_cases",
        "public_test_cases",
        "hidden_test_cases",
        "conversations",
        "public_pass_rates",
        "all_pass_rates",
    ]
    assert rec["public_pass_rates"] == [[0.5, 0.0], [1.0, 0.0], [1.0, 0.0]]  # [turn][session], carried
    assert rec["all_pass_rates"] == [[0.0, 1.0, 1.0], [0.0, 0.0, 0.0]]  # [session][turn]
    assert json.loads(rec["public_test_cases"]) == {"inputs": ["2 3\n", "10 -4\n"], "outputs": ["5\n", "6\n"]}
    conv = rec["conversations"][0]
    assert [m["role"] for m in conv] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert conv[2]["content"] == "```python\nprint(0)\n```"  # thinking stripped from the context
    with Store(tmp_path / "b.db") as b:
        assert jsonl_export.import_sessions(b, jsonl_export.read_jsonl(lines, "x")) == (3, 0)
        assert _export(b) == first
        assert jsonl_export.import_sessions(b, jsonl_export.read_jsonl(lines, "x")) == (0, 3)
        raw = b.session(json.loads(lines[0])["cobalt"]["sessions"][0]["id"]).turns[0].reply
        assert raw.startswith("<think>hmm</think>")


def _with_session_field(line: str, name: str, value: object) -> str:
    record = json.loads(line)
    record["cobalt"]["sessions"][0][name] = value
    return json.dumps(record)


def _with_turn_field(line: str, name: str, value: object) -> str:
    record = json.loads(line)
    record["cobalt"]["sessions"][0]["turns"][0][name] = value
    return json.dumps(record)


def test_import_validates_everything_before_writing(tmp_path: Path) -> None:
    with Store(tmp_path / "a.db") as a:
        _fill(a)
        good = _export(a).splitlines()
    with Store(tmp_path / "b.db") as b:
        for bad, message in [
            ("{not json", "not valid JSON"),
            ("[1]", "must be a JSON object"),
            (json.dumps({**json.loads(good[0]), "conversations": "x"}), "no 'conversations' list"),
            (_with_turn_field(good[0], "latency_s", "slow"), "the turn field 'latency_s' must be float, not 'slow'"),
            (_with_turn_field(good[0], "tokens", 2.5), "'tokens' must be int"),
            (_with_session_field(good[0], "started_at", "yesterday"), "session 0 has a field of the wrong type"),
            (_with_session_field(good[0], "turns", {"a": 1}), "session entry 0 is not an object with a list"),
        ]:
            with pytest.raises(StoreError, match=message):
                jsonl_export.read_jsonl([good[0], bad], "f.jsonl")
        assert b.counts() == (0, 0)


def test_published_reference_records_import(tmp_path: Path) -> None:
    conv = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U"},
        {"role": "assistant", "content": "```python\nprint(3)\n```"},
        {"role": "user", "content": "F1"},
        {"role": "assistant", "content": "no code"},
        {"role": "user", "content": "F2"},
    ]
    record = {
        "id": "ref-1",
        "instruction": "U",
        "public_test_cases": json.dumps({"inputs": ["1"], "outputs": ["3"]}),
        "hidden_test_cases": json.dumps({"inputs": ["1", "2"], "outputs": ["3", "4"]}),
        "conversations": [conv, conv[:4]],
        "public_pass_rates": [[1.0, 0.0], [0.0, 0.0]],
        "all_pass_rates": [[0.5, 0.0], [0.0]],
    }
    with Store(tmp_path / "r.db") as store:
        sessions = jsonl_export.read_jsonl([json.dumps(record)], "ref.jsonl")
        assert jsonl_export.import_sessions(store, sessions) == (2, 0)
        first = store.session(sessions[0].id)
        assert [t.program for t in first.turns] == ["print(3)\n", None]
        assert [t.public_pass_rate for t in first.turns] == [1.0, 0.0] and first.turns[0].hidden_pass_rate == 0.5
        assert first.turns[1].messages == conv[:4] and first.source == "import"
        assert (first.status, store.session(sessions[1].id).status) == ("unsolved", "unsolved")
    # three samples that said the same thing are three sessions; a last turn passing its public tests: passed
    same = {**record, "conversations": [conv[:4]] * 3, "public_pass_rates": [[1.0] * 3], "all_pass_rates": [[1.0]] * 3}
    with Store(tmp_path / "s.db") as store:
        sessions = jsonl_export.read_jsonl([json.dumps(same)], "ref.jsonl")
        assert jsonl_export.import_sessions(store, sessions) == (3, 0)
        assert [store.session(x.id).status for x in sessions] == ["passed"] * 3
        assert jsonl_export.import_sessions(store, jsonl_export.read_jsonl([json.dumps(same)], "ref.jsonl")) == (0, 3)
    # a file imported before the copies were told apart keeps its ids: imported again, nothing is added
    before = [jsonl_export._session_id("ref-1", c, 0) for c in (conv, conv[:4])]
    assert [s.id for s in jsonl_export.read_jsonl([json.dumps(record)], "ref.jsonl")] == before


def test_stats_solve_rate_per_turn_per_model(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        _fill(store)
        result = stats(store)
    assert (result["sessions"], result["turns"], result["problems"]) == (4, 6, 2)
    a, b_none, b_v1 = result["groups"]
    assert (a["model"], a["sessions"], a["turns"]) == ("model-a", 2, 5)
    assert a["solve_rate_per_turn"] == [0.0, 0.5, 0.5] and a["solved_by_turn"] == [0.0, 0.5, 0.5]
    assert a["mean_hidden_pass_rate_per_turn"] == [0.0, 0.5, 0.5]
    assert (b_none["model"], b_none["adapter_version"], b_none["statuses"]) == ("model-b", None, {"running": 1})
    assert b_none["solve_rate_per_turn"] == [] and b_none["turns"] == 0
    assert (b_v1["adapter_version"], b_v1["sessions"], b_v1["statuses"]) == ("v1", 1, {PASSED: 1})
    assert b_v1["solve_rate_per_turn"] == [0.0]  # public passed but hidden 50%: not solved
    with Store(tmp_path / "s.db") as store:
        assert stats(store, model="model-b")["sessions"] == 2
        assert stats(store, source="collect")["sessions"] == 2


def test_tampered_and_flagged_turns_are_stored_and_counted(tmp_path: Path) -> None:
    with Store(tmp_path / "h.db") as store:
        sid = store.start_session(sum_problem(), "model-h", "collect", started_at=10.0)
        turns = [make_turn(0, 0.0, 0.0), make_turn(1, 0.0, 0.0), make_turn(2, 1.0, 1.0)]
        turns[0].hidden = RunResult(tests=[TestResult("tampered")], tampered=True, flags=["frames"])
        turns[1].public = RunResult(tests=[TestResult("failed")], flags=["gc"])
        for turn in turns:
            store.append_turn(sid, turn)
        sid2 = store.start_session(sum_problem(), "model-h", "collect", started_at=11.0)
        store.append_turn(sid2, make_turn(0, 1.0, 1.0))
        back = store.session(sid).turns
        assert [t.tampered for t in back] == [True, False, False]
        assert [t.flags for t in back] == [["frames"], ["gc"], []]
        assert back[0].summary()["tampered"] is True
        group = stats(store)["groups"][0]
    assert group["tampered_rate_per_turn"] == [0.5, 0.0, 0.0]  # of the sessions that took the turn
    assert group["flagged_rate_per_turn"] == [0.5, 1.0, 0.0]


def test_an_id_with_an_underscore_resolves_from_its_prefix(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        store.start_session(add_problem(), "m", "import", session_id="run_2026_a1")
        store.start_session(add_problem(), "m", "import", session_id="runX2026")  # `_` is not a wildcard
        assert store.resolve_id("run_2026") == "run_2026_a1"
