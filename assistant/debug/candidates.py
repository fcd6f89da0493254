"""Several edits per debug turn, chosen by the project's own tests. The first reply is sampled
as a one-reply turn is (the loop's temperature, streamed); `debug.candidates - 1` more are
requested at the same time at `debug.candidate_temperature`, so the server decodes them in one
batch. Each edit that applies runs the test command in the sandbox, and the turn keeps the one
that passes the most tests (the first on ties, so a tie keeps the greedy answer). Agentless
selects among sampled patches by their tests the same way.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from assistant.interfaces import ChatModel, Message
from assistant.serving.chat import ChatResult, LLMError
from assistant.settings import DebugSettings, LoopSettings


@dataclass
class Candidates:
    """The replies of one turn, the first (streamed) one first, and how each one scored."""

    replies: list[ChatResult]
    temperatures: list[float]
    scores: list[int] = field(default_factory=list)
    failed: int = 0  # extra requests that the server did not answer (the turn goes on without them)

    def chosen(self) -> int:
        """The index of the best score, the first one on ties."""
        return max(range(len(self.scores)), key=lambda i: (self.scores[i], -i))

    def summary(self, index: int) -> dict[str, object]:
        return {
            "turn": index,
            "scores": self.scores,
            "chosen": self.chosen(),
            "failed": self.failed,
            "completion_tokens": sum(r.completion_tokens for r in self.replies),
        }


def sample(
    client: ChatModel,
    messages: list[Message],
    first: Callable[[], ChatResult],
    temperature: float,
    loop: LoopSettings,
    debug: DebugSettings,
) -> Candidates:
    """`first()` (the streamed reply) and `debug.candidates - 1` more at once. LLMError of the
    first propagates (the session ends on it); an extra one that fails is dropped and counted."""
    extra = debug.candidates - 1
    with ThreadPoolExecutor(max_workers=max(extra, 1), thread_name_prefix="candidate") as pool:
        futures = [
            pool.submit(
                client.chat,
                messages,
                temperature=debug.candidate_temperature,
                top_p=loop.top_p,
                max_tokens=loop.max_tokens,
            )
            for _ in range(extra)
        ]
        found = Candidates([first()], [temperature])
        for future in futures:
            try:
                found.replies.append(future.result())
                found.temperatures.append(debug.candidate_temperature)
            except LLMError:
                found.failed += 1
    return found
