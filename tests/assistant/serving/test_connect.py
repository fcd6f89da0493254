"""Choosing the client for a model name (`assistant.serving.connect`, opened through
`assistant.runtime.open_client`): provider ids, unknown models, and on the real vLLM
server with the tiny model, the promoted adapter and a registered version hot-loaded on
demand."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.runtime import open_client
from assistant.serving import hot_load, models, server
from tests.conftest import make_random_adapter

PROMPT = [{"role": "user", "content": "def is_prime(n):"}]


def test_resolve_unknown_and_missing_models(home_config) -> None:
    with pytest.raises(models.ModelError, match="unknown model"):
        open_client(home_config, "no-such-model")
    with pytest.raises(models.ModelError, match="no model checkpoint"):
        open_client(home_config, "./does/not/exist")
    client = open_client(home_config, "openai/gpt-4o-mini")
    assert client.api_base is None and client.model == "openai/gpt-4o-mini"


def test_resolve_client_serves_the_promoted_adapter(tiny_server, tmp_path: Path) -> None:
    import json

    adapter = make_random_adapter(models.resolve("tiny", tiny_server.cfg.paths), tmp_path / "promoted", seed=3)
    current = tiny_server.home / "adapters" / "current.json"
    current.parent.mkdir(parents=True, exist_ok=True)
    current.write_text(json.dumps({"tiny": {"version": 7, "name": "tiny-v7", "path": str(adapter)}}))
    try:
        client = open_client(tiny_server.cfg, "tiny", progress=lambda _: None)
        assert client.model == "hosted_vllm/tiny-v7" and client.adapter_version == "tiny-v7"
        assert "tiny-v7" in hot_load.served_models(tiny_server.api_base)  # hot-loaded on demand
        assert client.chat(PROMPT, max_tokens=8).text
        base = open_client(tiny_server.cfg, "tiny", adapter="base", progress=lambda _: None)
        assert base.model == "hosted_vllm/tiny" and base.adapter_version is None
    finally:
        current.unlink()
        hot_load.unload_adapter(tiny_server.api_base, "tiny-v7")


def test_resolve_client_loads_a_registered_version_on_demand(tiny_server, tmp_path: Path) -> None:
    import json

    registered = tiny_server.home / "adapters" / "v9"
    make_random_adapter(models.resolve("tiny", tiny_server.cfg.paths), registered, seed=5)
    (registered / "cobalt-adapter.json").write_text(json.dumps({"base_model": "tiny", "version": 9}))
    try:
        client = open_client(tiny_server.cfg, "tiny", adapter="v9", progress=lambda _: None)
        assert client.model == "hosted_vllm/tiny-v9" and client.adapter_version == "tiny-v9"
        assert "tiny-v9" in hot_load.served_models(tiny_server.api_base)
        again = open_client(tiny_server.cfg, "tiny", adapter="tiny-v9", progress=lambda _: None)
        assert again.model == "hosted_vllm/tiny-v9"  # already served: reused, not loaded twice
        assert again.chat(PROMPT, max_tokens=8).text
        for wrong in ("v10", "other-v9", "latest"):
            with pytest.raises(server.ServerError, match="neither loaded in the server nor a registered version"):
                open_client(tiny_server.cfg, "tiny", adapter=wrong, progress=lambda _: None)
    finally:
        hot_load.unload_adapter(tiny_server.api_base, "tiny-v9")
        import shutil

        shutil.rmtree(registered)


def test_the_engine_stored_with_eval_sessions_is_known_by_the_servers_own_answer() -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer
    from types import SimpleNamespace

    from assistant.serving.connect import engine_of

    class Props(BaseHTTPRequestHandler):
        llama = True

        def do_GET(self) -> None:  # llama-server answers /props, vLLM does not
            self.send_response(200 if self.llama and self.path == "/props" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    class NotLlama(Props):
        llama = False

    for handler, expected in ((Props, "llama.cpp"), (NotLlama, None)):
        httpd = HTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            client = SimpleNamespace(api_base=f"http://127.0.0.1:{httpd.server_port}/v1")
            assert engine_of(client) == expected
        finally:
            httpd.shutdown()
    assert engine_of(SimpleNamespace(api_base=None)) is None  # a provider model
