"""Chat with a model through litellm: streaming, timeout, retries (litellm's own), token counts.

`ChatClient` talks to the local vLLM server (`hosted_vllm/<name>` + `api_base`) or to any
litellm provider (`openai/gpt-4o-mini`, ...). It does not start servers or resolve model
names; `assistant.serving.connect.resolve_client` does that. Tests script replies by overriding
`request_kwargs` to pass litellm's `mock_response`.

With `stop_at_fence` (the default) every request streams, and the stream is closed as soon
as the reply's python block is closed (`extract.answer_end`): the reply keeps the text up to
and including the closing fence, `finish_reason` is "fence", and closing the connection
makes vLLM abort the request. A stop string cannot do this: "```" both opens and closes.
With `repeat_stop` (model.stop_on_repetition) a streamed reply whose tail falls into a loop
(`assistant.messages.repetition`) is ended the same way, with `finish_reason` "repetition".
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any, Callable

from assistant.messages.extract import answer_end
from assistant.messages.repetition import RepeatStop
from assistant.messages.shapes import ChatResult, LLMError, Message

Messages = list[Message]
TokenCallback = Callable[[str], None]


@functools.cache
def _litellm() -> Any:
    """litellm, imported on first use: it takes seconds, and most commands never chat."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.drop_params = True
    return litellm


def figures(tokens: int, elapsed_s: float) -> str:
    """A turn's live figures as the CLI and the TUI show them: tokens, tok/s, elapsed."""
    rate = tokens / elapsed_s if elapsed_s > 0 else 0.0
    return f"{tokens} tokens · {rate:.1f} tok/s · {elapsed_s:.0f} s"


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
        stop_at_fence: bool = True,
        repeat_stop: RepeatStop | None = None,
        logit_bias: dict[int, float] | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key = api_key or ("EMPTY" if api_base else None)
        self.timeout_s = timeout_s
        self.retries = retries
        self.max_tokens = max_tokens
        self.display_name = display_name or model
        self.stop_at_fence = stop_at_fence
        self.repeat_stop = repeat_stop
        self.logit_bias = logit_bias  # token id -> bias, sent with every request (assistant.serving.token_bias)
        self.extra_body = extra_body  # engine-specific request fields (llama.cpp's `lora` choice of adapter)
        self.base_model: str | None = None  # the built-in model served (its adapters too): its prompt wording
        self.adapter_version: str | None = None  # the served LoRA adapter, when there is one
        self.tokenizer_dir: str | None = None  # a locally served model's checkpoint (token counts)

    def request_kwargs(self, messages: Messages) -> dict[str, Any]:
        """Extra litellm arguments for one request (a hook for tests and providers)."""
        return {}

    def _kwargs(
        self, messages: Messages, temperature: float, top_p: float, max_tokens: int | None, stream: bool
    ) -> dict[str, Any]:
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
        if self.logit_bias:
            kwargs["logit_bias"] = self.logit_bias
        if self.extra_body:
            kwargs["extra_body"] = dict(self.extra_body)
        kwargs.update(self.request_kwargs(messages))
        return kwargs

    def chat(
        self,
        messages: Messages,
        *,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int | None = None,
        on_token: TokenCallback | None = None,
    ) -> ChatResult:
        """One completion; streams tokens to `on_token` when given (and always with
        `stop_at_fence`). litellm retries a failed request (`num_retries`, exponential
        back-off); then LLMError."""
        stream = on_token is not None or self.stop_at_fence or self.repeat_stop is not None
        try:
            llm = _litellm()  # imported before the clock starts: the first reply's times are the model's
            start = time.perf_counter()
            response = llm.completion(**self._kwargs(messages, temperature, top_p, max_tokens, stream))
            if stream:
                return self._collect_stream(response, start, on_token)
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

    def _collect_stream(self, stream: Any, start: float, on_token: TokenCallback | None) -> ChatResult:
        reader = _StreamReader(self, start, on_token)
        try:
            for chunk in stream:
                if reader.add(chunk):
                    break
        finally:
            _close(stream)
        return reader.result()

    def _describe(self, exc: Exception | None) -> str:
        where = f" at {self.api_base}" if self.api_base else ""
        name = type(exc).__name__ if exc else "unknown error"
        text = str(exc).strip().splitlines()[0][:300] if exc and str(exc).strip() else name
        if "Timeout" in name or "timed out" in text.lower():
            return (
                f"model {self.display_name}{where} did not answer within {self.timeout_s:.0f} s "
                f"({self.retries + 1} attempts); raise model.timeout_s if the machine is busy"
            )
        if "Connection" in name or "connect" in text.lower():
            return f"cannot reach model {self.display_name}{where}: is the server running (`cobalt serve`)?"
        return f"model {self.display_name}{where} failed after {self.retries + 1} attempts: {text}"


class _StreamReader:
    """Folds a stream's chunks into a ChatResult; `add` says when the answer is complete."""

    def __init__(self, client: ChatClient, start: float, on_token: TokenCallback | None) -> None:
        self.client, self.start, self.on_token = client, start, on_token
        self.text = ""
        self.finish: str | None = None
        self.usage: Any = None
        self.first_token_s: float | None = None
        self.checked_at = 0  # the text's length at the last repetition check

    def add(self, chunk: Any) -> bool:
        self.usage = getattr(chunk, "usage", None) or self.usage
        if not chunk.choices:
            return False
        choice = chunk.choices[0]
        self.finish = choice.finish_reason or self.finish
        delta = getattr(choice.delta, "content", None)
        if not delta:
            return False
        if self.first_token_s is None:
            self.first_token_s = time.perf_counter() - self.start
        end = answer_end(self.text + delta) if self.client.stop_at_fence and "`" in delta else None
        if end is not None:
            delta = delta[: max(0, end - len(self.text))]
            self.finish = "fence"
        self.text += delta
        if delta and self.on_token is not None:
            self.on_token(delta)
        return end is not None or self._looping()

    def _looping(self) -> bool:
        stop = self.client.repeat_stop
        if stop is None or len(self.text) - self.checked_at < stop.every_chars:
            return False
        self.checked_at = len(self.text)
        if not stop.looping(self.text):
            return False
        self.finish = "repetition"
        return True

    def result(self) -> ChatResult:
        latency = time.perf_counter() - self.start  # before counting: a count may ask the server
        completion = getattr(self.usage, "completion_tokens", 0) or 0
        prompt = getattr(self.usage, "prompt_tokens", 0) or 0
        if self.text and (not completion or self.finish in ("fence", "repetition")):
            completion = _count_tokens(self.client.model, self.text, self.client.api_base)
        return ChatResult(self.text, prompt, completion, latency, self.finish, self.first_token_s)


def _http_response(stream: Any) -> Any:
    """The httpx response under a litellm stream, or None. litellm keeps only the generator
    `response.iter_lines()`; closing that generator leaves the connection open, so the
    response is found in the generator's frame (`self`)."""
    lines = getattr(getattr(stream, "completion_stream", None), "streaming_response", None)
    frame = getattr(lines, "gi_frame", None)
    response = frame.f_locals.get("self") if frame is not None else None
    return response if hasattr(response, "is_closed") and hasattr(response, "close") else None


def _close(stream: Any) -> None:
    """Close a sync litellm stream's HTTP response: the server sees the client leave and
    aborts the request instead of generating up to max_tokens."""
    response = _http_response(stream)
    if response is not None:
        response.close()


def _count_tokens(model: str, text: str, api_base: str | None = None) -> int:
    """Tokens of `text`: the vLLM server's own tokenizer when there is one, else litellm's."""
    if api_base and model.startswith("hosted_vllm/"):
        try:
            import httpx

            response = httpx.post(  # vLLM reads `prompt` and answers `count`; llama.cpp `content`, `tokens`
                api_base.removesuffix("/v1") + "/tokenize",
                timeout=10,
                json={"model": model.split("/", 1)[1], "prompt": text, "content": text, "add_special_tokens": False},
            )
            if response.status_code == 200:
                body = response.json()
                return int(body["count"]) if "count" in body else len(body["tokens"])
        except Exception:
            pass
    try:
        return int(_litellm().token_counter(model=model, text=text))
    except Exception:
        return max(1, len(text) // 4)
