"""Turn latency on a real vLLM server: the fence stop ends a real stream where SmolLM2 would
go on explaining (and the server stops generating), n-gram speculative decoding runs and is
counted, and a server that refuses speculative decoding is started again without it."""

from __future__ import annotations

import gc
import time
from typing import Any, Iterator

import pytest

from assistant.messages import extract
from assistant.serving import chat, models, server, vllm_args
from assistant.serving.chat import ChatClient
from bench.turn import metric
from tests.conftest import free_port

pytestmark = [pytest.mark.server]

# SmolLM2 (greedy) answers this with one ```python block and then explains it at length.
PROMPT = [
    {
        "role": "user",
        "content": "Write a Python function that adds two numbers, in a ```python code block, "
        "then explain it in detail.",
    }
]


# SmolLM2's own context: room for a request that runs far past its fence when nothing aborts it.
CONTEXT = 8192
LONG = 6000


def spec_on(section: Any) -> Any:
    """The server settings with n-gram speculative decoding on (configs/default.yaml leaves it off)
    and SmolLM2's whole context, so an unaborted request can run to LONG tokens."""
    speculative = section.speculative.model_copy(update={"enabled": True})
    return section.model_copy(update={"speculative": speculative, "max_model_len": CONTEXT})


@pytest.fixture(scope="module")
def smol(tmp_path_factory: pytest.TempPathFactory, test_config: Any) -> Iterator[server.ServerInfo]:
    from assistant.settings import PathsSettings

    if not models.is_prepared("smollm2", test_config.paths):
        models.prepare("smollm2", test_config.paths)
    paths = PathsSettings(data_dir=tmp_path_factory.mktemp("smol-server-home"), cache_dir=test_config.paths.cache_dir)
    info, proc = server.start(spec_on(test_config.server), paths, "smollm2", port=free_port(), progress=lambda _: None)
    try:
        yield info
    finally:
        server.stop_process(proc)


class _NoEos(ChatClient):
    """A client whose requests run to max_tokens unless aborted (vLLM's `ignore_eos`)."""

    def request_kwargs(self, messages: Any) -> dict[str, Any]:
        return {"extra_body": {"ignore_eos": True}}


def test_the_stream_ends_at_the_closing_fence_on_a_real_server(
    smol: server.ServerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fence comes at token 71. The stopped request would run to LONG tokens (ignore_eos) if
    # the server did not abort it; with the garbage collector off, only the client's own close can
    # end it early (a stream left open ran 650 tokens until a collection closed it). Comparing
    # with a 110- or 256-token reply failed twice on CI (the whole reply was generated), and with
    # 2048 once: on a loaded 2-core CI machine the abort landed 1623 tokens in, late but well short
    # of the limit; LONG leaves that delay three times over.
    closed: list[bool] = []

    def close(stream: Any) -> None:
        closed.append(chat._http_response(stream) is not None)
        real_close(stream)

    real_close = chat._close
    monkeypatch.setattr(chat, "_close", close)
    client = _NoEos("hosted_vllm/smollm2", api_base=smol.api_base, max_tokens=160, retries=0, timeout_s=300)
    client.stop_at_fence = False
    full = client.chat(PROMPT, temperature=0.0)
    cut_end = extract.answer_end(full.text)
    assert cut_end is not None and len(full.text) > cut_end + 20  # the model goes on after its code

    client.stop_at_fence = True
    before = metric(smol.api_base, "vllm:generation_tokens_total")
    streamed: list[str] = []
    closed.clear()
    gc.disable()
    try:
        stopped = client.chat(PROMPT, temperature=0.0, max_tokens=LONG, on_token=streamed.append)
        assert closed == [True]  # the HTTP response under litellm's stream was found and closed
        deadline = time.monotonic() + 150  # the server aborts the request once it sees the closed stream
        while metric(smol.api_base, "vllm:num_requests_running") > 0 and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        gc.enable()
    generated = metric(smol.api_base, "vllm:generation_tokens_total") - before
    assert stopped.finish_reason == "fence" and "".join(streamed) == stopped.text
    assert stopped.text == full.text[:cut_end] and extract.code(stopped.text) == extract.code(full.text)
    assert stopped.completion_tokens < full.completion_tokens
    assert generated < LONG // 2, generated  # the server stopped too, not only the client


def test_ngram_speculative_decoding_runs_and_is_counted(smol: server.ServerInfo) -> None:
    assert smol.speculative
    client = ChatClient("hosted_vllm/smollm2", api_base=smol.api_base, max_tokens=40, retries=0, timeout_s=300)
    client.chat(
        [{"role": "user", "content": "Repeat exactly: one two three four five one two three four five"}],
        temperature=0.0,
    )
    assert metric(smol.api_base, "vllm:spec_decode_num_drafts_total") > 0
    assert metric(smol.api_base, "vllm:spec_decode_num_accepted_tokens_total") > 0


def test_a_server_refusing_speculative_decoding_starts_without_it(home_config: Any) -> None:
    refused = home_config.server.speculative.model_copy(update={"method": "no-such-proposer", "enabled": True})
    section = home_config.server.model_copy(update={"speculative": refused})
    lines: list[str] = []
    info, proc = server.start(section, home_config.paths, "tiny", port=free_port(), progress=lines.append)
    try:
        assert not info.speculative
        assert any("without" in line for line in lines)
        client = ChatClient("hosted_vllm/tiny", api_base=info.api_base, max_tokens=8, retries=0, timeout_s=120)
        assert client.chat([{"role": "user", "content": "hi"}]).completion_tokens > 0
    finally:
        server.stop_process(proc)


def test_the_options_can_be_switched_off(test_config: Any) -> None:
    from pathlib import Path

    on, env = vllm_args.command(Path("/m"), "m", spec_on(test_config.server), 1)
    assert "--speculative-config" in on and "--enable-prefix-caching" in on
    section = test_config.server.model_copy(
        update={
            "speculative": test_config.server.speculative.model_copy(update={"enabled": False}),
            "prefix_caching": False,
            "preload": [],
        }
    )
    off, env_off = vllm_args.command(Path("/m"), "m", section, 1)
    assert "--speculative-config" not in off and "--no-enable-prefix-caching" in off
    assert server.vllm_args.variants(section) == [False]
    assert "libtcmalloc" not in env_off.get("LD_PRELOAD", "")
