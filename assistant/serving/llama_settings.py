"""The `server.llama` settings section: llama.cpp's server, the CPU engine (its command line is
`assistant.serving.llama_server`). Kept beside the engine, as `debug/search_settings` is beside the
search; `assistant.settings` composes it into `ServerSettings`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sandbox.sandbox_settings import Section


class LlamaSettings(Section):
    """llama.cpp's server (`llama-server`), the CPU engine (assistant/serving/llama_server.py)."""

    threads: int | None = Field(None, ge=1, description="Threads for decoding and prefill (null: every core).")
    parallel: int = Field(
        4, ge=1, description="Parallel slots: requests decoded together (eval/collect concurrency), each max_model_len."
    )
    batch_size: int = Field(512, ge=1, description="Prompt tokens processed per batch (llama-server -b/-ub).")
    cache_reuse: int = Field(
        256, ge=0, description="Smallest chunk of a cached prompt reused by shifting (--cache-reuse; 0: off)."
    )
    lora_scale: float = Field(1.0, description="Scale of an adapter chosen by a request (the request's `lora` field).")
    speculative: Literal["none", "ngram-simple", "ngram-mod", "ngram-map-k", "ngram-cache"] = Field(
        "none",
        description="Draftless speculative decoding (--spec-type): drafts copied from the text so far, checked "
        "in one batch; pays when replies repeat their prompt (a debug turn's function). Changes greedy "
        "replies in the last bits.",
    )
