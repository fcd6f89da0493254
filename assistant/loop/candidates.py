"""Several replies per turn, chosen by tests (`loop.candidates` for a problem's turns,
`debug.candidates` for `cobalt debug`'s edits). The first reply is sampled as a one-reply turn
is (the loop's temperature, streamed); `count - 1` more are requested at the same time at the
candidate temperature, so the server decodes them in one batch. Each one's program runs in the
sandbox, and the turn keeps the one that passes the most tests the model may see (the public
tests of a problem, the project's test command for a file); on ties one whose program is new
(a resubmitted program would only bring the same feedback again), then the first, so a tie
keeps the greedy answer. Agentless selects among sampled patches by their tests the same way.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from assistant.interfaces import ChatModel, Message
from assistant.messages.shapes import ChatResult, LLMError
from assistant.settings import LoopSettings
from sandbox.api import RunResult


@dataclass
class Candidates:
    """The replies of one turn, the first (streamed) one first, and how each one scored."""

    replies: list[ChatResult]
    temperatures: list[float]
    scores: list[int] = field(default_factory=list)
    failed: int = 0  # extra requests that the server did not answer (the turn goes on without them)
    fresh: list[bool] = field(default_factory=list)  # per reply: its program repeats no earlier turn's

    def chosen(self) -> int:
        """The index of the best score; on ties one that repeats no earlier program, then the first."""
        return max(range(len(self.scores)), key=lambda i: (self.scores[i], self.fresh[i] if self.fresh else 0, -i))

    def summary(self, index: int) -> dict[str, object]:
        return {
            "turn": index,
            "scores": self.scores,
            "chosen": self.chosen(),
            "failed": self.failed,
            "completion_tokens": sum(r.completion_tokens for r in self.replies),
        }


def passed_count(run: RunResult) -> int:
    return sum(t.passed for t in run.tests)


def sample(
    client: ChatModel,
    messages: list[Message],
    first: Callable[[], ChatResult],
    temperature: float,
    loop: LoopSettings,
    count: int,
    candidate_temperature: float,
    max_tokens: int | None = None,
) -> Candidates:
    """`first()` (the streamed reply) and `count - 1` more at once at `candidate_temperature`,
    each at most `max_tokens` long (None: `loop.max_tokens`).
    LLMError of the first propagates (the session ends on it); an extra one that fails is
    dropped and counted."""
    extra = count - 1
    with ThreadPoolExecutor(max_workers=max(extra, 1), thread_name_prefix="candidate") as pool:
        futures = [
            pool.submit(
                client.chat,
                messages,
                temperature=candidate_temperature,
                top_p=loop.top_p,
                max_tokens=max_tokens or loop.max_tokens,
            )
            for _ in range(extra)
        ]
        found = Candidates([first()], [temperature])
        for future in futures:
            try:
                found.replies.append(future.result())
                found.temperatures.append(candidate_temperature)
            except LLMError:
                found.failed += 1
    return found
