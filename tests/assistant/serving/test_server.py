"""The real vLLM server on the tiny model: chat through litellm, LoRA hot-load/unload."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.serving import hot_load, models, server
from tests.conftest import make_random_adapter

PROMPT = [{"role": "user", "content": "def is_prime(n):"}]


def test_chat_completion_through_litellm(tiny_server) -> None:
    client = tiny_server.chat_client(max_tokens=16)
    result = client.chat(PROMPT, temperature=0.0)
    assert result.text
    assert result.completion_tokens > 0 and result.prompt_tokens > 0
    streamed: list[str] = []
    again = client.chat(PROMPT, temperature=0.0, on_token=streamed.append)
    assert "".join(streamed) == again.text == result.text  # greedy is deterministic


def test_lora_adapter_changes_output_and_unloads(tiny_server, tmp_path: Path) -> None:
    base_dir = models.resolve("tiny", tiny_server.cfg.paths)
    adapter = make_random_adapter(base_dir, tmp_path / "adapter")
    base_text = tiny_server.chat_client(max_tokens=24).chat(PROMPT, temperature=0.0).text

    hot_load.load_adapter(tiny_server.api_base, "tiny-test-v1", adapter)
    assert "tiny-test-v1" in hot_load.served_models(tiny_server.api_base)
    from assistant.serving.chat import ChatClient

    lora = ChatClient("hosted_vllm/tiny-test-v1", api_base=tiny_server.api_base, max_tokens=24, retries=0)
    lora_text = lora.chat(PROMPT, temperature=0.0).text
    assert lora_text != base_text

    with pytest.raises(server.ServerError, match="already loaded"):
        hot_load.load_adapter(tiny_server.api_base, "tiny-test-v1", adapter)

    hot_load.unload_adapter(tiny_server.api_base, "tiny-test-v1")
    assert "tiny-test-v1" not in hot_load.served_models(tiny_server.api_base)
    with pytest.raises(server.ServerError):
        hot_load.unload_adapter(tiny_server.api_base, "tiny-test-v1")


def test_unreachable_server_is_one_sentence() -> None:
    from assistant.messages.shapes import LLMError
    from assistant.serving.chat import ChatClient
    from tests.conftest import free_port

    client = ChatClient("hosted_vllm/tiny", api_base=f"http://127.0.0.1:{free_port()}/v1", retries=0, timeout_s=5)
    with pytest.raises(LLMError, match="cannot reach model"):
        client.chat(PROMPT)


def test_busy_port_is_refused(tiny_server, home_config) -> None:
    busy = home_config.server.model_copy(update={"port": tiny_server.info.port})
    with pytest.raises(server.ServerError, match="busy"):
        server.start(busy, home_config.paths, "tiny", progress=lambda _: None)


def test_server_dying_during_startup_is_reported(home_config, tmp_path: Path) -> None:
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "qwen2", "architectures": ["NoSuchArch"]}')
    from tests.conftest import free_port

    with pytest.raises(server.ServerError, match="exited during start-up"):
        server.start(home_config.server, home_config.paths, str(broken), port=free_port(), progress=lambda _: None)
    assert server.running(home_config.paths) is None


@pytest.mark.server
def test_two_starts_at_once_share_one_server(home_config) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from tests.conftest import free_port

    settings = home_config.server.model_copy(update={"port": free_port()})
    with ThreadPoolExecutor(2) as pool:
        found = list(
            pool.map(lambda _: server.ensure(settings, home_config.paths, "tiny", progress=lambda _: None), [0, 1])
        )
    try:
        assert found[0].pid == found[1].pid  # the second waited for the first start and reused it
        assert server.running(home_config.paths).pid == found[0].pid
    finally:
        server.stop(home_config.paths)
