"""How fast the served model reads a prompt and writes a reply, measured on its own debug turns, and
what that allows before `debug.deadline_s`.

A streamed turn gives both rates: the prompt's tokens over the time to the first token, the reply's
tokens after the first over the rest (a reply cut at its closing fence reports no usage: the prompt
is then counted with the served model's tokenizer). The rates are kept as moving averages in one
small JSON file per endpoint under `<data dir>/pace/`, beside the server's record (this machine's
own speed: a fresh `cobalt debug` on the same server starts from them). A prompt the server had
cached reads fast, so one turn's reading rate counts at most as twice (or a quarter of) the
average. With a pace known, a model turn's prompt is cut to what the model reads in the time left
once the reply and the test run are paid for; without one, nothing is cut.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from assistant.messages.shapes import ChatResult
from assistant.store.atomic import write_json

WEIGHT = 0.5  # a new turn's share of the moving averages
FASTER, SLOWER = 2.0, 4.0  # one turn's reading rate counts at most this many times above / below the average
MIN_PROMPT_TOKENS = 64  # fewer than this read before the first token times the server, not the prompt


@dataclass(frozen=True)
class Pace:
    """Tokens per second reading the prompt and writing the reply, and a typical reply's length."""

    prompt_tps: float
    reply_tps: float
    reply_tokens: float


def measured(result: ChatResult, prompt_tokens: int = 0) -> Pace | None:
    """The pace of one streamed reply (its prompt `prompt_tokens` long when the server did not say),
    or None when it cannot tell (not streamed, too short)."""
    first, total = result.first_token_s, result.latency_s
    prompt = result.prompt_tokens or prompt_tokens
    if first is None or first <= 0 or total <= first:
        return None
    if prompt < MIN_PROMPT_TOKENS or result.completion_tokens < 2:
        return None
    reply_tps = (result.completion_tokens - 1) / (total - first)
    return Pace(prompt / first, reply_tps, float(result.completion_tokens))


def _blend(old: Pace, new: Pace) -> Pace:
    mix = lambda a, b: (1 - WEIGHT) * a + WEIGHT * b  # noqa: E731
    reading = min(max(new.prompt_tps, old.prompt_tps / SLOWER), old.prompt_tps * FASTER)
    return Pace(
        mix(old.prompt_tps, reading), mix(old.reply_tps, new.reply_tps), mix(old.reply_tokens, new.reply_tokens)
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
            found = Pace(**{k: float(v) for k, v in json.loads(self.path.read_text()).items()})
        except (OSError, ValueError, TypeError, AttributeError):  # none yet, or damaged: measured again
            return None
        rates = (found.prompt_tps, found.reply_tps, found.reply_tokens)
        return found if all(math.isfinite(x) and x > 0 for x in rates) else None

    def observe(self, result: ChatResult, prompt_tokens: int = 0) -> None:
        """Fold one reply's pace into the book (and its file); `prompt_tokens`: the prompt's
        length by our own count, for a reply whose usage the server did not send."""
        new = measured(result, prompt_tokens)
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
