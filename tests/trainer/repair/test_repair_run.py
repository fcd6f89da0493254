"""What makes two repair sessions interchangeable on a rerun: the engine that served them, when known."""

from __future__ import annotations

from assistant.settings import LoopSettings
from tests.trainer.trainer_fakes import add_problem
from trainer.repair.items import RepairItem
from trainer.repair.repair_run import session_meta


def test_sessions_of_another_engine_do_not_match_and_an_unknown_engine_matches_as_before() -> None:
    item = RepairItem("add#m0", add_problem(), "def add(a, b):\n    return a - b\n")
    loop = LoopSettings()
    before = session_meta(item, "feedback", "default", loop)
    assert "engine" not in before["repair"]  # as sessions stored before the engine was recorded
    assert session_meta(item, "feedback", "default", loop, None) == before
    llama = session_meta(item, "feedback", "default", loop, "llama.cpp")
    assert llama != before and llama["repair"] == {**before["repair"], "engine": "llama.cpp"}


def test_the_benchmark_samples_one_candidate_a_turn_whatever_the_loop_is_set_to() -> None:
    """`loop.candidates: 3` is the assistant's best-of-3 (and raised a TypeError in repair
    sessions); the benchmark measures the model as it is."""
    from trainer.repair.repair_run import loop_settings
    from trainer.repair.repair_settings import BenchmarkSection

    out = loop_settings(LoopSettings(candidates=3), 1, BenchmarkSection())
    assert out.candidates == 1 and out.turns == 2


def test_a_changed_client_grading_setting_or_reask_does_not_match_earlier_sessions() -> None:
    """Sessions of another docstring setting, sanitizer or re-ask would make a rerun measure
    nothing new (every (item, arm) answered from the store); defaults leave the key as before."""
    item = RepairItem("add#m0", add_problem(), "def add(a, b):\n    return a - b\n")
    loop = LoopSettings()
    before = session_meta(item, "feedback", "default", loop)
    assert session_meta(item, "feedback", "default", loop, client={}) == before
    assert session_meta(item, "feedback", "default", loop, client={"docstrings": "allowed"}) != before
    raw = session_meta(item, "feedback", "default", LoopSettings(sanitize_answers=False))
    assert raw["repair"] == {**before["repair"], "sanitize_answers": False}
    blind = session_meta(item, "blind", "default", loop, reask_text="Check it.")
    assert blind != session_meta(item, "blind", "default", loop, reask_text="Look again.")
    assert session_meta(item, "feedback", "default", loop, reask_text="Check it.") == before  # feedback arm: no re-ask
