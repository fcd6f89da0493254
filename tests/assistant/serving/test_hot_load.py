"""Adapters in a running server (assistant/serving/hot_load.py): which server is a llama-server of
ours. The restarts themselves run against a real llama-server in test_llama_engine.py."""

from __future__ import annotations

from assistant.serving import hot_load


def test_a_server_address_without_a_port_is_no_llama_record_not_a_traceback() -> None:
    """`--server http://gpu-box/v1` (a proxy on port 80): the llama.cpp record lookup raised a
    ValueError traceback instead of taking it for a server that is not ours."""
    for api_base in ("http://gpu-box/v1", "gpu-box/v1", "https://gpu-box"):
        assert hot_load._llama_record(api_base) is None
