"""How fast the served model reads a prompt and writes a reply, measured on its own debug turns, and
what that allows before `debug.deadline_s`.

A streamed turn gives both rates: the prompt's tokens over the time to the first token, the reply's
tokens after the first over the rest. They are kept as moving averages in one small JSON file per
endpoint under `<data dir>/pace/`, beside the server's record (this machine's own speed: a fresh
`cobalt debug` on the same server starts from them). With a pace known, a model turn's prompt is
cut to what the model reads in the time left once the reply and the test run are paid for; without
one, nothing is cut.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from assistant.messages.shapes import ChatResult
from assistant.store.atomic import write_json

WEIGHT = 0.5  # a new turn's share of the moving averages
MIN_PROMPT_TOKENS = 64  # fewer than this read before the first token times the server, not the prompt


@dataclass(frozen=True)
class Pace:
    """Tokens per second reading the prompt and writing the reply, and a typical reply's length."""

    prompt_tps: float
    reply_tps: float
    reply_tokens: float

    def seconds(self, prompt_tokens: int, reply_tokens: float) -> float:
        return prompt_tokens / self.prompt_tps + reply_tokens / self.reply_tps


def measured(result: ChatResult) -> Pace | None:
    """The pace of one streamed reply, or None when it cannot tell (not streamed, too short)."""
    first, total = result.first_token_s, result.latency_s
    if first is None or first <= 0 or total <= first:
        return None
    if result.prompt_tokens < MIN_PROMPT_TOKENS or result.completion_tokens < 2:
        return None
    reply_tps = (result.completion_tokens - 1) / (total - first)
    return Pace(result.prompt_tokens / first, reply_tps, float(result.completion_tokens))


def _blend(old: Pace, new: Pace) -> Pace:
    mix = lambda a, b: (1 - WEIGHT) * a + WEIGHT * b  # noqa: E731
    return Pace(
        mix(old.prompt_tps, new.prompt_tps), mix(old.reply_tps, new.reply_tps), mix(old.reply_tokens, new.reply_tokens)
    )


class PaceBook:
    """The pace of one model endpoint, read from and written to `path` (None: this process only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.pace = self._read()

    @classmethod
    def for_endpoint(cls, data_dir: Path, model: str, api_base: str | None) -> "PaceBook":
        """The book of `model` served at `api_base` (None: a provider's), kept under `data_dir`."""
        key = hashlib.sha256(f"{model}\n{api_base or ''}".encode()).hexdigest()[:16]
        return cls(data_dir / "pace" / f"{key}.json")

    def _read(self) -> Pace | None:
        if self.path is None:
            return None
        try:
            found = Pace(**json.loads(self.path.read_text()))
        except (OSError, ValueError, TypeError):  # none yet, or damaged: measured again
            return None
        return found if min(found.prompt_tps, found.reply_tps) > 0 else None

    def observe(self, result: ChatResult) -> None:
        """Fold one reply's pace into the book (and its file)."""
        new = measured(result)
        if new is None:
            return
        self.pace = new if self.pace is None else _blend(self.pace, new)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_json(self.path, asdict(self.pace))

    def prompt_cap(self, seconds_left: float, reply_tokens: int) -> int | None:
        """The most prompt tokens the model reads in `seconds_left` while still writing a typical
        reply (at most `reply_tokens`); None when the pace is unknown. Never below zero."""
        if self.pace is None:
            return None
        reply = min(float(reply_tokens), self.pace.reply_tokens)
        reading = seconds_left - reply / self.pace.reply_tps
        return max(0, int(reading * self.pace.prompt_tps))
