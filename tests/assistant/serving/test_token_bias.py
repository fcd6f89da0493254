"""The docstring ban (`model.suppress_docstrings`): the banned ids are exactly the tokens whose
text holds a triple quote, and the real vLLM server applies a client's logit_bias (through
litellm): a favoured token fills the reply, a banned first token is never the first."""

from __future__ import annotations

from typing import Any

from assistant.serving import models
from assistant.serving.token_bias import BAN, TRIPLE_QUOTES, triple_quote_ban

PROMPT = [{"role": "user", "content": "def is_prime(n):"}]


def _tokenizer(test_config: Any) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(models.resolve("tiny", test_config.paths))


def test_the_ban_is_every_triple_quote_token(test_config: Any) -> None:
    tok = _tokenizer(test_config)
    banned = triple_quote_ban(str(models.resolve("tiny", test_config.paths)))
    texts = {i: tok.convert_tokens_to_string([t]) for t, i in tok.get_vocab().items()}
    assert banned and set(banned.values()) == {BAN}
    assert set(banned) == {i for i, text in texts.items() if any(q in text for q in TRIPLE_QUOTES)}
    assert any(i in banned for i in tok('    """Return x."""')["input_ids"])


def test_the_server_applies_the_logit_bias(tiny_server, test_config: Any) -> None:
    tok = _tokenizer(test_config)
    quote = next(iter(triple_quote_ban(str(models.resolve("tiny", test_config.paths)))))
    client = tiny_server.chat_client(max_tokens=8)
    client.logit_bias = {quote: 100.0}
    assert '"""' in client.chat(PROMPT, temperature=0.0).text or "'''" in client.chat(PROMPT, temperature=0.0).text
    client.logit_bias = None
    free = client.chat(PROMPT, temperature=0.0).text
    first = tok(free, add_special_tokens=False)["input_ids"][0]
    client.logit_bias = {first: BAN}
    banned = client.chat(PROMPT, temperature=0.0).text
    assert tok(banned, add_special_tokens=False)["input_ids"][:1] != [first]


def test_local_clients_send_the_ban_only_when_configured(test_config: Any) -> None:
    from assistant.serving.connect import local_bias
    from assistant.settings_loader import load_settings

    path = models.resolve("tiny", test_config.paths)
    assert local_bias(load_settings().model, path) == triple_quote_ban(str(path))  # on by default
    off = load_settings(overrides={"model": {"suppress_docstrings": False}}).model
    assert local_bias(off, path) is None
