"""What a rerun of `cobalt eval` reuses from the store: finished natural sessions of the same
model on the same problem content, never a repair-benchmark session (also source `eval`, on the
same problem, but starting from a seeded bug: reused, 58 of 82 test tasks counted as passed)."""

from __future__ import annotations

from pathlib import Path

from assistant.problems import Problem
from assistant.store import Store
from sandbox.api import TestCase
from trainer.eval.evaluate import usable_sessions

TESTS = [TestCase(code="assert inc(1) == 2")]
INC = Problem(id="inc", statement="Write inc(x).", kind="function", entry_point="inc",
              public_tests=TESTS, hidden_tests=TESTS)


def stored(store: Store, meta: dict | None, status: str = "passed") -> str:
    sid = store.start_session(INC, "m", "eval", meta=meta)
    store.set_status(sid, status)
    return sid


def test_a_repair_session_is_never_reused_as_a_natural_one(cobalt_home: Path) -> None:
    with Store.open() as store:
        stored(store, {"repair": {"item": "inc#m0", "arm": "blind"}})
        assert usable_sessions(store, INC, "m", turns=3) == []
        natural = stored(store, None)
        assert [s.id for s in usable_sessions(store, INC, "m", turns=3)] == [natural]
        assert usable_sessions(store, INC, "other-model", turns=3) == []
