"""Several edits per debug turn: the best score wins, the first on ties (the greedy answer), and
an extra request the server fails is dropped and counted instead of ending the turn."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from assistant.debug.candidates import Candidates, sample
from assistant.serving.chat import ChatResult, LLMError
from assistant.settings import DebugSettings, LoopSettings


def test_the_best_score_wins_and_a_tie_keeps_the_first() -> None:
    replies = [ChatResult(text=str(i), completion_tokens=10) for i in range(4)]
    found = Candidates(replies, [0.0, 0.8, 0.8, 0.8], scores=[2, -1, 2, 1])
    assert found.chosen() == 0
    found.scores = [0, 3, -1, 3]
    assert found.chosen() == 1
    assert found.summary(2) == {"turn": 2, "scores": [0, 3, -1, 3], "chosen": 1, "failed": 0, "completion_tokens": 40}


class HalfDown:
    """Answers every other extra request; the rest fail as a server error does."""

    def __init__(self) -> None:
        self.n = 0
        self.lock = threading.Lock()

    def chat(self, messages: Any, *, temperature: float, **kwargs: Any) -> ChatResult:
        with self.lock:
            self.n += 1
            fail = self.n % 2 == 1
        if fail:
            raise LLMError("the server fell over")
        return ChatResult(text=f"t={temperature}")


def test_failed_extras_are_dropped_and_a_failed_first_reply_ends_the_turn() -> None:
    debug = DebugSettings(candidates=5, candidate_temperature=0.7)
    found = sample(HalfDown(), [], lambda: ChatResult(text="first"), 0.0, LoopSettings(), debug)
    assert [r.text for r in found.replies] == ["first", "t=0.7", "t=0.7"] and found.failed == 2
    assert found.temperatures == [0.0, 0.7, 0.7]

    def down() -> ChatResult:
        raise LLMError("no first reply")

    with pytest.raises(LLMError, match="no first reply"):
        sample(HalfDown(), [], down, 0.0, LoopSettings(), debug)
