"""Chat with a model through litellm: streaming, timeout, retries (litellm's own), token counts.

`ChatClient` talks to the local vLLM server (`hosted_vllm/<name>` + `api_base`) or to any
litellm provider (`openai/gpt-4o-mini`, ...). It does not start servers or resolve model
names; `assistant.connect.resolve_client` does that. Tests script replies by overriding
`request_kwargs` to pass litellm's `mock_response`.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

from assistant.errors import UserError

Messages = list[dict[str, str]]
TokenCallback = Callable[[str], None]


@functools.cache
def _litellm() -> Any:
    """litellm, imported on first use: it takes seconds, and most commands never chat."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.drop_params = True
    return litellm


class LLMError(UserError):
    """The model could not answer (unreachable, timed out, refused) after all retries."""


@dataclass
class ChatResult:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str | None = None

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.latency_s if self.latency_s > 0 else 0.0


class ChatClient:
    """One model endpoint. `model` is a litellm model id; `api_base` for local servers."""

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 300.0,
        retries: int = 2,
        max_tokens: int = 1024,
        display_name: str | None = None,
    ) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key = api_key or ("EMPTY" if api_base else None)
        self.timeout_s = timeout_s
        self.retries = retries
        self.max_tokens = max_tokens
        self.display_name = display_name or model
        self.adapter_version: str | None = None  # the served LoRA adapter, when there is one

    def request_kwargs(self, messages: Messages) -> dict[str, Any]:
        """Extra litellm arguments for one request (a hook for tests and providers)."""
        return {}

    def _kwargs(self, messages: Messages, temperature: float, top_p: float,
                max_tokens: int | None, stream: bool) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            "top_p": top_p,
            "max_tokens": max_tokens or self.max_tokens,
            "timeout": self.timeout_s,
            "stream": stream,
            "num_retries": self.retries,
            "retry_strategy": "exponential_backoff_retry",
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        if stream:
            kwargs["stream_options"] = {"include_usage": True}
        kwargs.update(self.request_kwargs(messages))
        return kwargs

    def chat(self, messages: Messages, *, temperature: float = 0.0, top_p: float = 1.0,
             max_tokens: int | None = None, on_token: TokenCallback | None = None) -> ChatResult:
        """One completion; streams tokens to `on_token` when given. litellm retries a failed
        request (`num_retries`, exponential back-off); then LLMError."""
        stream = on_token is not None
        start = time.perf_counter()
        try:
            response = _litellm().completion(**self._kwargs(messages, temperature, top_p, max_tokens, stream))
            if stream:
                return self._collect_stream(response, start, on_token, messages)
            return self._result(response, start, messages)
        except Exception as exc:  # litellm maps every provider error to its own types
            raise LLMError(self._describe(exc)) from None

    def _result(self, response: Any, start: float, messages: Messages) -> ChatResult:
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        text = choice.message.content or ""
        return ChatResult(
            text=text,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            latency_s=time.perf_counter() - start,
            finish_reason=choice.finish_reason,
        )

    def _collect_stream(self, stream: Any, start: float, on_token: TokenCallback,
                        messages: Messages) -> ChatResult:
        parts: list[str] = []
        finish: str | None = None
        usage = None
        for chunk in stream:
            usage = getattr(chunk, "usage", None) or usage
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            delta = getattr(choice.delta, "content", None)
            if delta:
                parts.append(delta)
                on_token(delta)
            finish = choice.finish_reason or finish
        text = "".join(parts)
        completion_tokens = getattr(usage, "completion_tokens", 0) or 0
        prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
        if not completion_tokens and text:
            completion_tokens = _count_tokens(self.model, text)
        return ChatResult(text, prompt_tokens, completion_tokens, time.perf_counter() - start, finish)

    def _describe(self, exc: Exception | None) -> str:
        where = f" at {self.api_base}" if self.api_base else ""
        name = type(exc).__name__ if exc else "unknown error"
        text = str(exc).strip().splitlines()[0][:300] if exc and str(exc).strip() else name
        if "Timeout" in name or "timed out" in text.lower():
            return (f"model {self.display_name}{where} did not answer within {self.timeout_s:.0f} s "
                    f"({self.retries + 1} attempts); raise model.timeout_s if the machine is busy")
        if "Connection" in name or "connect" in text.lower():
            return f"cannot reach model {self.display_name}{where}: is the server running (`cobalt serve`)?"
        return f"model {self.display_name}{where} failed after {self.retries + 1} attempts: {text}"


def _count_tokens(model: str, text: str) -> int:
    try:
        return int(_litellm().token_counter(model=model, text=text))
    except Exception:
        return max(1, len(text) // 4)
