"""A chat message, the result of one chat request, and the error of a model that could not
answer: what every part that talks to a model (serving, the loop, debug, the trainer) passes."""

from __future__ import annotations

from dataclasses import dataclass

from assistant.errors import UserError

Message = dict[str, str]


class LLMError(UserError):
    """The model could not answer (unreachable, timed out, refused) after all retries."""


@dataclass
class ChatResult:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str | None = None
    first_token_s: float | None = None  # time to the first streamed token

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.latency_s if self.latency_s > 0 else 0.0
