"""Degenerate repetition: a block of at least `block_chars` characters repeated `times` times
in a row. The reward calls such a completion malformed (trainer/training/reward.py), and `RepeatStop`
ends a reply (served: assistant/serving/chat.py; trained: trainer/training/fence_stop.py) as soon as its tail
has fallen into such a loop, instead of generating up to max_tokens: a 0.5B model that starts
repeating a line on this CPU repeats it for minutes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def degenerate(text: str, block_chars: int = 32, times: int = 8) -> bool:
    """True when some block of >= block_chars characters repeats >= times in a row, i.e.
    some stretch of length times x L (L >= block_chars) has period L."""
    n = len(text)
    if n < block_chars * times:
        return False

    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    need_base = times - 1
    for period in range(block_chars, n // times + 1):
        eq = codes[:-period] == codes[period:]
        need = need_base * period  # matches s[i] == s[i + L] over (times - 1) x L positions
        if eq.sum() < need:
            continue
        padded = np.concatenate(([0], eq.astype(np.int8), [0]))
        edges = np.flatnonzero(np.diff(padded))
        if len(edges) and int((edges[1::2] - edges[::2]).max()) >= need:
            return True
    return False


@dataclass(frozen=True)
class RepeatStop:
    """When to end a growing text: its last `window` characters are degenerate. Checked once
    every `every_chars` new characters, so the cost stays far below a token's."""

    block_chars: int = 32
    times: int = 8
    window: int = 4096
    every_chars: int = 64

    def looping(self, text: str) -> bool:
        """Whether the tail of `text` has fallen into a loop."""
        return degenerate(text[-self.window :], self.block_chars, self.times)
