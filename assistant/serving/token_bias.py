"""Token biases sent with each request to a local model (the OpenAI API's `logit_bias`).

With `model.suppress_docstrings`, every token of the served model's vocabulary whose text
holds a triple quote is banned, so the model cannot copy the task's docstring into its
program: in first-turn replies of the embedded model that docstring was more than half of
the tokens (median 187 -> 80 without it, docs/experiments/2026-11-23-turn-latency.md), and asking it not to copy
it did not help. The program's behaviour does not depend on its docstrings; a program that
needs a triple-quoted string must build it another way.
"""

from __future__ import annotations

import functools
from pathlib import Path

BAN = -100.0
TRIPLE_QUOTES = ('"""', "'''")


@functools.lru_cache(maxsize=8)
def triple_quote_ban(tokenizer_dir: str) -> dict[int, float]:
    """{token id: BAN} for every token of the tokenizer in `tokenizer_dir` whose text holds a
    triple quote (read once per directory)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(Path(tokenizer_dir)))
    banned: dict[int, float] = {}
    for token, index in tok.get_vocab().items():
        text = tok.convert_tokens_to_string([token])
        if any(q in text for q in TRIPLE_QUOTES):
            banned[int(index)] = BAN
    return banned
