"""Several replies per turn (`assistant.loop.candidates`): the best score wins, on ties a new
program over a resubmitted one, then the first (the greedy answer); an extra request the server
fails is dropped and counted instead of ending the turn."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from assistant.loop.candidates import Candidates, sample
from assistant.messages.shapes import ChatResult, LLMError
from assistant.settings import LoopSettings


def test_the_best_score_wins_and_a_tie_keeps_the_first() -> None:
    replies = [ChatResult(text=str(i), completion_tokens=10) for i in range(4)]
    found = Candidates(replies, [0.0, 0.8, 0.8, 0.8], scores=[2, -1, 2, 1])
    assert found.chosen() == 0
    found.scores = [0, 3, -1, 3]
    assert found.chosen() == 1
    assert found.summary(2) == {"turn": 2, "scores": [0, 3, -1, 3], "chosen": 1, "failed": 0, "completion_tokens": 40}
    found.fresh = [True, False, True, True]  # reply 1 resubmits an earlier program: the tie goes to 3
    assert found.chosen() == 3
    found.scores, found.fresh = [1, 1, 0, 0], [False, False, True, True]
    assert found.chosen() == 0  # a better score wins even when it is a resubmission


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
    found = sample(HalfDown(), [], lambda: ChatResult(text="first"), 0.0, LoopSettings(), 5, 0.7)
    assert [r.text for r in found.replies] == ["first", "t=0.7", "t=0.7"] and found.failed == 2
    assert found.temperatures == [0.0, 0.7, 0.7]

    def down() -> ChatResult:
        raise LLMError("no first reply")

    with pytest.raises(LLMError, match="no first reply"):
        sample(HalfDown(), [], down, 0.0, LoopSettings(), 5, 0.7)
