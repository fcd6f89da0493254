"""Shared fixtures: an isolated COBALT_HOME per test, one real vLLM server on the tiny model
per test session, one real sandbox pool per test session, and a random LoRA adapter maker.

Models come from the shared cache (`make test` prepares `tiny` and `smollm2` there); data
(stores, server state, adapters) always lives in temporary directories.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any, Iterator

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# The server tests that do not name an engine serve the tiny random model, which has no GGUF file:
# they run on vLLM. The llama.cpp engine's tests choose it explicitly (test_llama_engine.py,
# test_gate_llama.py), on SmolLM2's GGUF.
os.environ.setdefault("COBALT__SERVER__ENGINE", "vllm")
# Tests move COBALT_HOME around; the model cache stays the one `make test` prepared.
os.environ.setdefault(
    "COBALT_CACHE",
    str(
        Path(os.environ["COBALT_HOME"]) / "cache"
        if os.environ.get("COBALT_HOME")
        else Path.home() / ".cache" / "cobalt"
    ),
)


@pytest.fixture(scope="session", autouse=True)
def _library_loggers_on_the_session_stream() -> None:
    """transformers makes its log handler on first use, bound to the sys.stderr of that moment:
    made inside a test's capsys, it writes to a closed file in a later test ("--- Logging
    error ---" and a traceback on stderr). Made here, it holds the session's own stream."""
    from transformers.utils import logging as hf_logging

    hf_logging.get_verbosity()


@pytest.fixture(autouse=True)
def _no_shipped_adapter(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test serves the committed adapter by accident: before the default adapter is served,
    `trainer.release.shipped.before_serve` would import it into the test's fresh home and merge it
    into qwen-coder (minutes per test, and its progress lines on stderr). Tests of that hook name
    their own ship directory."""
    monkeypatch.setenv("COBALT__TRAIN__SHIP__DIR", str(tmp_path_factory.getbasetemp() / "no-shipped-adapters"))


@pytest.fixture(autouse=True)
def _no_small_edit_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """`cobalt debug` tries small edits before asking the model (debug.search, on by default); the
    debug tests script the model's replies, so the search is off unless a test turns it on
    (tests/assistant/cli/test_cli_debug_search.py)."""
    monkeypatch.setenv("COBALT__DEBUG__SEARCH__ENABLED", "false")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def cobalt_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data directory for one test (models still come from the shared cache)."""
    home = tmp_path / "cobalt-home"
    home.mkdir()
    monkeypatch.setenv("COBALT_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def test_config() -> Any:
    """The settings of the test session (a small server, short replies)."""
    from assistant.settings_loader import load_settings

    return load_settings(
        overrides={
            "server": dict(engine="vllm", cpu_kvcache_space_gb=1, max_model_len=2048, max_lora_rank=16, max_loras=2),
            "model": dict(timeout_s=120, retries=1, max_tokens=64),
        }
    )


@pytest.fixture
def home_config(test_config: Any, cobalt_home: Path) -> Any:
    """The session's settings with this test's data directory."""
    from assistant.settings import PathsSettings

    return test_config.model_copy(update={"paths": PathsSettings(cache_dir=test_config.paths.cache_dir)})


class TinyServer:
    """The session's vLLM server on the tiny model."""

    def __init__(self, info: Any, cfg: Any, home: Path) -> None:
        self.info = info
        self.cfg = cfg
        self.home = home
        self.api_base: str = info.api_base
        self.model: str = info.model

    def chat_client(self, **kwargs: Any):
        from assistant.serving.chat import ChatClient

        kwargs.setdefault("timeout_s", 120)
        kwargs.setdefault("retries", 1)
        kwargs.setdefault("max_tokens", 64)
        return ChatClient(f"hosted_vllm/{self.model}", api_base=self.api_base, **kwargs)


@pytest.fixture(scope="session")
def tiny_server(tmp_path_factory: pytest.TempPathFactory, test_config: Any) -> Iterator[TinyServer]:
    from assistant.serving import models, server
    from assistant.settings import PathsSettings

    if not models.is_prepared("tiny", test_config.paths):
        models.prepare("tiny", test_config.paths)
    home = tmp_path_factory.mktemp("tiny-server-home")
    cfg = test_config.model_copy(update={"paths": PathsSettings(data_dir=home, cache_dir=test_config.paths.cache_dir)})
    info, proc = server.start(cfg.server, cfg.paths, "tiny", port=free_port(), progress=lambda _: None)
    try:
        yield TinyServer(info, cfg, home)
    finally:
        server.stop_process(proc)


@pytest.fixture(scope="session")
def sandbox(test_config: Any):
    """One warm sandbox pool on the built image for the whole session."""
    from sandbox import Sandbox

    box = Sandbox.from_config(test_config.sandbox)
    try:
        yield box
    finally:
        box.close()


def make_random_adapter(model_dir: Path, out: Path, rank: int = 8, seed: int = 0, std: float = 0.5) -> Path:
    """A LoRA adapter with random (non-zero) A and B, so it visibly changes the output."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    config = LoraConfig(
        r=rank,
        lora_alpha=4 * rank,
        target_modules=["q_proj", "v_proj", "o_proj"],
        init_lora_weights=False,
        task_type="CAUSAL_LM",
    )
    peft_model = get_peft_model(base, config)
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_" in name:
                param.normal_(0.0, std)
    peft_model.save_pretrained(out)
    return out
