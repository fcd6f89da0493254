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


def test_a_session_with_another_feedback_wording_is_not_reused(cobalt_home: Path) -> None:
    """The 1.5B's own wording (prompts.yaml model_wordings) (default, then code_first) replaced instruction_last: its
    sessions stored before that must not count for a run that words the feedback otherwise."""
    own = sampling_meta(LoopSettings().merged({"temperature": 0.0}), "qwen-coder-1.5b")
    named = sampling_meta(LoopSettings().merged({"temperature": 0.0, "feedback_wording": "brief"}), "qwen-coder-1.5b")
    assert own["eval"]["feedback_wording"] == "code_first" and named["eval"]["feedback_wording"] == "brief"
    with Store.open() as store:
        earlier = stored(store, GREEDY)  # instruction_last, recorded by leaving the key out
        assert usable_sessions(store, INC, "m", 3, own) == []
        assert usable_sessions(store, INC, "m", 3, named) == []
        assert [s.id for s in usable_sessions(store, INC, "m", 3, GREEDY)] == [earlier]
        later = stored(store, own)
        assert [s.id for s in usable_sessions(store, INC, "m", 3, own)] == [later]


def test_client_settings_that_change_replies_keep_their_sessions_apart() -> None:
    """Toggling the docstring ban, the repetition stop or the adapter scale and rerunning `cobalt
    eval` reused the earlier sessions, so the measured difference was 0 by construction."""
    from types import SimpleNamespace

    from assistant.messages.repetition import RepeatStop
    from trainer.eval.evaluate import client_meta

    as_shipped = SimpleNamespace(base_model="qwen-coder-1.5b", logit_bias={1: -100.0}, repeat_stop=RepeatStop(32, 8))
    assert client_meta(as_shipped) == {}  # what every stored local session had: they still match
    loose = SimpleNamespace(base_model="qwen-coder-1.5b", logit_bias=None, repeat_stop=None)
    assert client_meta(loose) == {"docstrings": "allowed", "repeat_stop": "off"}
    half = SimpleNamespace(**vars(as_shipped), extra_body={"lora": [{"id": 0, "scale": 0.0}, {"id": 1, "scale": 0.5}]})
    assert client_meta(half) == {"lora_scale": 0.5}
    assert client_meta(SimpleNamespace(base_model=None, logit_bias=None, repeat_stop=None)) == {}  # a provider


def test_grading_settings_other_than_the_defaults_separate_eval_sessions() -> None:
    from assistant.settings import LoopSettings
    from trainer.eval.evaluate import sampling_meta

    assert sampling_meta(LoopSettings(sanitize_answers=False)) != sampling_meta(LoopSettings())
    assert sampling_meta(LoopSettings(feedback_field_chars=50)) != sampling_meta(LoopSettings())
    assert "sanitize_answers" not in sampling_meta(LoopSettings())["eval"]  # as sessions stored before
