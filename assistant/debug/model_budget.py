"""The token budget of a debugging prompt, from the model actually served: its context length
(asked of the vLLM server, `/v1/models` `max_model_len`; litellm's model table for a provider;
`server.max_model_len` when neither answers) and its own tokenizer for counting (a locally served
checkpoint's `tokenizer.json`; about three characters a token otherwise).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

from assistant.debug.edit_prompt import Budget
from assistant.interfaces import ChatModel
from assistant.settings import Settings

CHARS_PER_TOKEN = 3  # a cautious guess for code when no tokenizer is at hand


def served_context(client: ChatModel) -> int | None:
    """The context length the server or provider reports for the client's model, or None."""
    model, api_base = str(getattr(client, "model", "")), getattr(client, "api_base", None)
    name = model.split("/", 1)[1] if model.startswith("hosted_vllm/") else model
    if api_base:
        import httpx  # heavy third-party: only when a budget is made

        try:
            cards = httpx.get(api_base.rstrip("/") + "/models", timeout=10).json().get("data", [])
        except (httpx.HTTPError, ValueError):
            return None
        mine = [c for c in cards if c.get("id") == name] or cards  # an adapter's card may omit the length
        return next((int(c["max_model_len"]) for c in mine + cards if c.get("max_model_len")), None)
    if not model:
        return None  # no model at all (the search alone)
    try:
        import litellm  # heavy third-party: only for a provider's model

        info = litellm.get_model_info(model)
    except Exception:  # litellm raises a bare Exception for a model it does not know
        return None
    return info.get("max_input_tokens") or info.get("max_tokens")


def token_counter(client: ChatModel) -> Callable[[str], int]:
    """Counts tokens with the served checkpoint's tokenizer when local, else estimates."""
    folder = getattr(client, "tokenizer_dir", None)
    path = Path(folder or "") / "tokenizer.json"
    if folder and path.is_file():
        return _counter(str(path))
    return lambda text: len(text) // CHARS_PER_TOKEN + 1


@functools.lru_cache(maxsize=4)
def _counter(path: str) -> Callable[[str], int]:
    """The token count of `tokenizer.json` at `path`, the file read once per process."""
    from tokenizers import Tokenizer  # heavy third-party: only when a budget is made

    tokenizer = Tokenizer.from_file(path)
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def budget_for(client: ChatModel, settings: Settings) -> Budget:
    """The budget of a debug prompt for `client`: its context, the loop's reply tokens kept free."""
    context = settings.debug.context_tokens or served_context(client) or settings.server.max_model_len
    answer = settings.loop.max_tokens or settings.model.max_tokens
    return Budget(context_tokens=context, answer_tokens=min(answer, context // 2), count=token_counter(client))
