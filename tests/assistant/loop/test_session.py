"""The multi-turn loop against the real sandbox, with replies scripted through litellm's
mock_response: feedback, hidden grading, resampling, error paths, resume, human turns."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from assistant.loop import feedback, prompts, recorder
from assistant.loop.public_hidden import run_public_and_hidden
from assistant.loop.session import (
    ProgramExtracted,
    Session,
    SessionEnded,
    TokenStreamed,
    TurnFinished,
    TurnStarted,
)
from assistant.settings import LoopSettings
from assistant.store.trajectory import MODEL_ERROR, PASSED, RUNNING, SANDBOX_ERROR, UNSOLVED
from assistant.store.trajectory_db import Store
from tests.assistant.loop_fakes import (
    RIGHT_SUM,
    WRONG_SUM,
    ByTemperature,
    ScriptedClient,
    add_problem,
    answer,
    sum_problem,
    wait_for_stored_turns,
)
from tests.sandbox import hostile

pytestmark = pytest.mark.docker
REPO = Path(__file__).resolve().parents[3]


def _session(client: Any, sandbox: Any, store: Store | None, **settings: Any) -> tuple[Session, list[Any]]:
    events: list[Any] = []
    session = Session(
        sum_problem(), client, sandbox, LoopSettings(**{"turns": 4, **settings}), subscriber=events.append
    )
    return (recorder.record(session, store) if store is not None else session), events


def test_wrong_then_right_stores_two_turns_exact_feedback_and_hidden_results(cobalt_home: Path, sandbox: Any) -> None:
    client = ScriptedClient([answer(WRONG_SUM), answer(RIGHT_SUM, "Fixed: add instead of subtract.")])
    with Store.open() as store:
        session, events = _session(client, sandbox, store)
        assert session.run() == PASSED
        record = store.session(session.id)
    assert record.status == PASSED and [t.index for t in record.turns] == [0, 1]
    first, second = record.turns
    assert first.feedback == "Input:\n2 3\nProgram's Output:\n-1\nExpected Output:\n5"
    assert first.feedback_message == prompts.style().feedback_content(first.feedback)
    assert second.feedback == feedback.ALL_PASSED
    assert (first.public_pass_rate, first.hidden_pass_rate) == (0.0, pytest.approx(1 / 3))
    assert (second.public_pass_rate, second.hidden_pass_rate) == (1.0, 1.0)
    assert first.hidden is not None and [t.status for t in first.hidden.tests] == ["failed", "passed", "failed"]
    assert first.hidden.tests[2].input == "-1 -1\n"
    assert first.program == WRONG_SUM + "\n" and first.author == "model" and first.temperature == 0.6
    # The second request carried the first reply and its feedback, and no hidden test.
    sent = client.calls[1]["messages"]
    assert sent == [
        *prompts.style().initial_messages(sum_problem()),
        {"role": "assistant", "content": answer(WRONG_SUM)},
        prompts.style().feedback_message(first.feedback),
    ]
    assert second.messages == sent
    assert not any("-1 -1" in m["content"] or "0 0" in m["content"] for call in client.calls for m in call["messages"])
    kinds = [type(e) for e in events if not isinstance(e, TokenStreamed)]
    assert kinds == [TurnStarted, ProgramExtracted, TurnFinished] * 2 + [SessionEnded]
    assert "".join(e.text for e in events if isinstance(e, TokenStreamed) and e.index == 1) == client_reply(1)


def client_reply(index: int) -> str:
    return [answer(WRONG_SUM), answer(RIGHT_SUM, "Fixed: add instead of subtract.")][index]


def test_function_problem_feedback_shows_the_returned_value(cobalt_home: Path, sandbox: Any) -> None:
    client = ScriptedClient([answer("def add(a, b):\n    return a - b"), answer("def add(a, b):\n    return a + b")])
    session = Session(add_problem(), client, sandbox, LoopSettings(turns=3))
    assert session.run() == PASSED
    assert session.turns[0].feedback == "Test:\nassert add(1, 2) == 3\nProgram's Output:\n-1\nExpected Output:\n3"
    assert session.turns[0].hidden_pass_rate == 0.5  # add(2, 0) == 2 passes by luck


def test_repeated_program_is_resampled_at_the_repeat_temperature(cobalt_home: Path, sandbox: Any) -> None:
    wrong_again = "a, b = map(int, input().split())\n\n\nprint(a  -  b)"
    client = ScriptedClient([answer(WRONG_SUM), answer(wrong_again), answer(WRONG_SUM), answer(RIGHT_SUM)])
    with Store.open() as store:
        session, events = _session(client, sandbox, store, repeat_resamples=2, repeat_temperature=1.3)
        assert session.run() == PASSED
        turns = store.session(session.id).turns
    assert [(t.resamples, t.repeated, t.temperature) for t in turns] == [(0, False, 0.6), (2, False, 1.3)]
    started = [(e.index, e.attempt, e.temperature) for e in events if isinstance(e, TurnStarted)]
    assert started == [(0, 0, 0.6), (1, 0, 0.6), (1, 1, 1.3), (1, 2, 1.3)]
    assert client.calls[1]["messages"] == client.calls[2]["messages"] == client.calls[3]["messages"]


def test_a_copy_of_the_starter_code_is_resampled(cobalt_home: Path, sandbox: Any) -> None:
    problem = sum_problem()
    problem.starter_code = "a, b = map(int, input().split())\n...\n"
    client = ScriptedClient([answer("a, b = map(int, input().split())\n...  "), answer(RIGHT_SUM)])
    session = Session(problem, client, sandbox, LoopSettings(turns=2, repeat_resamples=1))
    assert session.run() == PASSED
    assert [(t.resamples, t.program) for t in session.turns] == [(1, RIGHT_SUM + "\n")]
    assert len(client.calls) == 2


def test_a_program_still_repeating_after_all_resamples_is_kept_and_marked(cobalt_home: Path, sandbox: Any) -> None:
    client = ScriptedClient([answer(WRONG_SUM)] * 3)
    session, _ = _session(client, sandbox, None, turns=2, repeat_resamples=1)
    assert session.run() == UNSOLVED
    assert [(t.resamples, t.repeated) for t in session.turns] == [(0, False), (1, True)]
    assert session.turns[1].program == WRONG_SUM + "\n"


MUL_SUM = "a, b = map(int, input().split())\nprint(a * b)"
SUB_SUM = "a, b = map(int, input().split())\nprint(b - a)"


def test_candidates_keep_the_reply_passing_the_most_public_tests(cobalt_home: Path, sandbox: Any) -> None:
    """Three replies per turn, the first greedy, two at the candidate temperature. Turn 0: all
    fail, the greedy one is kept (first on a tie; a reply without code scores -1). Turn 1: the
    greedy reply resubmits it, so the tie goes to the new (still wrong) program. Turn 2: the
    sampled right program passes the public tests and is kept."""
    client = ByTemperature(
        {
            0.0: [answer(WRONG_SUM), answer(WRONG_SUM), answer(MUL_SUM)],
            0.9: ["No code, just words.", answer(SUB_SUM)]  # turn 0's two candidates
            + [answer(WRONG_SUM), answer(MUL_SUM)]  # turn 1's
            + [answer(RIGHT_SUM), answer(WRONG_SUM)],  # turn 2's
        }
    )
    with Store.open() as store:
        session, _ = _session(
            client, sandbox, store, turns=3, temperature=[0.0], candidates=3, candidate_temperature=0.9
        )
        assert session.run() == PASSED
        record = store.session(session.id)
    assert [(t.program, t.temperature) for t in record.turns] == [
        (WRONG_SUM + "\n", 0.0),
        (MUL_SUM + "\n", 0.9),
        (RIGHT_SUM + "\n", 0.9),
    ]
    assert not any(t.repeated for t in record.turns)
    scores = [t.candidates for t in record.turns]
    assert [c["scores"] for c in session.meta["candidates"]] == scores
    assert [s[0] for s in scores] == [0, 0, 0] and sorted(scores[0][1:]) == [-1, 0] and sorted(scores[2][1:]) == [0, 2]
    assert sorted(client.temperatures) == [0.0] * 3 + [0.9] * 6
    # every candidate of a turn saw the same prompt, and it never held a hidden test
    assert len({str(c["messages"]) for c in client.calls}) == 3
    assert not any("-1 -1" in m["content"] for call in client.calls for m in call["messages"])


def test_a_reply_without_code_is_a_no_code_turn(cobalt_home: Path, sandbox: Any) -> None:
    client = ScriptedClient(["I am not sure how to do this.", answer(RIGHT_SUM)])
    session, _ = _session(client, sandbox, None)
    assert session.run() == PASSED
    first = session.turns[0]
    assert (first.status, first.program, first.public, first.feedback) == ("no_code", None, None, feedback.NO_CODE)
    assert prompts.feedback_of(client.calls[1]["messages"][-1]["content"]) == feedback.NO_CODE


def test_model_error_ends_the_session_and_keeps_finished_turns(cobalt_home: Path, sandbox: Any) -> None:
    client = ScriptedClient([answer(WRONG_SUM), Exception("internal failure in the model server")])
    with Store.open() as store:
        session, events = _session(client, sandbox, store)
        assert session.run() == MODEL_ERROR
        record = store.session(session.id)
        assert (record.status, len(record.turns)) == (MODEL_ERROR, 1)
        assert "internal failure" in (record.error or "") and record.ended_at is not None
        assert isinstance(events[-1], SessionEnded) and events[-1].status == MODEL_ERROR
        # A model that fails before any turn leaves nothing in the store.
        failing, _ = _session(ScriptedClient([Exception("no such model")]), sandbox, store)
        assert failing.run() == MODEL_ERROR and store.counts() == (1, 1)


def test_sandbox_error_ends_the_session_with_a_clear_message(cobalt_home: Path, test_config: Any) -> None:
    from sandbox import Sandbox

    box = Sandbox.from_config(test_config.sandbox, pool_size=1)
    client = ScriptedClient([answer(WRONG_SUM), answer(RIGHT_SUM)])
    with Store.open() as store:
        session, _ = _session(client, box, store)
        session.subscribe(lambda e: box.close() if isinstance(e, TurnFinished) else None)  # the sandbox dies
        assert session.run() == SANDBOX_ERROR
        record = store.session(session.id)
    assert (record.status, len(record.turns)) == (SANDBOX_ERROR, 1)
    assert record.error == "the sandbox was closed"


def test_resume_a_stored_session_and_add_a_human_turn(cobalt_home: Path, sandbox: Any) -> None:
    with Store.open() as store:
        session, _ = _session(ScriptedClient([answer(WRONG_SUM)]), sandbox, store, turns=1)
        assert session.run() == UNSOLVED
        client = ScriptedClient([answer("print(5)")])
        resumed = recorder.resume(store, session.id, client, sandbox, LoopSettings(turns=4))
        assert store.session(session.id).status == RUNNING
        assert resumed.run(max_turns=2) == UNSOLVED
        assert prompts.feedback_of(client.calls[0]["messages"][-1]["content"]).endswith("Expected Output:\n5")
        human = resumed.human_turn(RIGHT_SUM)
        assert (human.author, human.passed_public, human.reply) == ("human", True, f"```python\n{RIGHT_SUM}\n```")
        resumed.finish(PASSED)
        record = store.session(session.id)
    assert [t.author for t in record.turns] == ["model", "model", "human"] and record.status == PASSED
    assert record.turns[2].messages[-1]["content"] == record.turns[1].feedback_message


def test_a_session_the_person_starts_is_stored_under_the_model_that_joins_it(cobalt_home: Path, sandbox: Any) -> None:
    """The TUI: the person tests their own program first (no model yet), then runs the loop. The
    session is the model's trajectory from then on, so the store names the model, not "human"."""
    with Store.open() as store:
        session, _ = _session(None, sandbox, store, turns=2)
        session.human_turn(WRONG_SUM)
        assert store.session(session.id).model == "human"
        session.client, session.adapter_version = ScriptedClient([answer(RIGHT_SUM)], name="qwen"), "qwen-v2"
        assert session.run(max_turns=2) == PASSED
        record = store.session(session.id)
    assert (record.model, record.adapter_version) == ("qwen", "qwen-v2")
    assert [t.author for t in record.turns] == ["human", "model"] and record.status == PASSED


KILLED = textwrap.dedent("""
    import sys
    sys.path[:0] = [{repo!r}, {tests!r}]
    from assistant.settings_loader import load_settings
    from assistant.loop.recorder import record
    from assistant.loop.session import Session
    from assistant.settings import LoopSettings
    from assistant.store.trajectory_db import Store
    from tests.assistant.loop_fakes import ScriptedClient, answer, sum_problem, WRONG_SUM
    from sandbox import Sandbox
    cfg = load_settings()
    box = Sandbox.from_config(cfg.sandbox, pool_size=1)
    replies = [answer(WRONG_SUM), answer("print(-1)"), answer("import time\\ntime.sleep(60)")]
    record(Session(sum_problem(), ScriptedClient(replies), box, LoopSettings(turns=5)), Store(sys.argv[1])).run()
""")


def test_sigkill_mid_turn_leaves_a_readable_store_with_every_finished_turn(tmp_path: Path) -> None:
    db = tmp_path / "killed.db"
    script = KILLED.format(repo=str(REPO), tests=str(Path(__file__).parents[1]))
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(db)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COBALT_HOME": str(tmp_path)},
    )
    try:
        wait_for_stored_turns(proc, db, 2)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(1.0)  # the third turn's program is now sleeping in the sandbox
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    with Store(db) as store:
        assert store.integrity_ok()
        (record,) = store.sessions(with_turns=True)
        assert record.status == RUNNING and [t.index for t in record.turns] == [0, 1]
        assert [t.program for t in record.turns] == [WRONG_SUM + "\n", "print(-1)\n"]


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_forged_run_stays_tampered_and_flagged_in_both_halves(sandbox: Any, sanitize: bool) -> None:
    public, hidden = run_public_and_hidden(sandbox, add_problem(), hostile.FORGE_RECORD, sanitize=sanitize)
    assert public.tampered and hidden.tampered and public.flags and hidden.flags == public.flags
    assert public.pass_rate == hidden.pass_rate == 0.0
