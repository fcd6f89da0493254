"""What a rerun of `cobalt eval` reuses from the store: finished natural sessions of the same
model on the same problem content sampled the same way; never a repair-benchmark session (also
source `eval`, on the same problem, but starting from a seeded bug: reused, 58 of 82 test tasks
counted as passed), nor one sampled at another temperature or length."""

from __future__ import annotations

from pathlib import Path

from assistant.problems.schema import Problem
from assistant.settings import LoopSettings
from assistant.store.trajectory_db import Store
from sandbox.api import TestCase
from trainer.eval.evaluate import sampling_meta, usable_sessions

TESTS = [TestCase(code="assert inc(1) == 2")]
INC = Problem(
    id="inc", statement="Write inc(x).", kind="function", entry_point="inc", public_tests=TESTS, hidden_tests=TESTS
)
GREEDY = sampling_meta(LoopSettings().merged({"temperature": 0.0}))


def stored(store: Store, meta: dict | None, status: str = "passed") -> str:
    sid = store.start_session(INC, "m", "eval", meta=meta)
    store.set_status(sid, status)
    return sid


def test_a_repair_session_is_never_reused_as_a_natural_one(cobalt_home: Path) -> None:
    with Store.open() as store:
        stored(store, {"repair": {"item": "inc#m0", "arm": "blind"}})
        assert usable_sessions(store, INC, "m", 3, GREEDY) == []
        natural = stored(store, GREEDY)
        assert [s.id for s in usable_sessions(store, INC, "m", 3, GREEDY)] == [natural]
        assert usable_sessions(store, INC, "other-model", 3, GREEDY) == []


def test_a_session_sampled_otherwise_is_not_reused(cobalt_home: Path) -> None:
    hot = sampling_meta(LoopSettings().merged({"temperature": 0.8}))
    longer = sampling_meta(LoopSettings().merged({"temperature": 0.0, "max_tokens": 2048}))
    with Store.open() as store:
        greedy = stored(store, GREEDY)
        stored(store, hot)
        stored(store, None)  # stored before sampling was recorded: unknown, so never reused
        assert [s.id for s in usable_sessions(store, INC, "m", 3, GREEDY)] == [greedy]
        assert len(usable_sessions(store, INC, "m", 3, hot)) == 1
        assert usable_sessions(store, INC, "m", 3, longer) == []
        unsolved = stored(store, GREEDY, status="unsolved")  # took no turn: covers no horizon
        assert unsolved not in [s.id for s in usable_sessions(store, INC, "m", 3, GREEDY)]
