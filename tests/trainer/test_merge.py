"""The promoted adapter merged into its base (tiny model): promote makes `v<N>/merged`
atomically, its logits equal the base + LoRA's, and the next server start for the assistant
serves it under the adapter's name (answering as the hot-loaded adapter does), while
callers that need the bare base are refused with one sentence."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from assistant import models, server
from tests.conftest import free_port, make_random_adapter
from trainer.merge import merged_dir
from trainer.registry import Registry, merge_into_base

PROMPT = [{"role": "user", "content": "def is_prime(n):"}]


def _promoted(cfg: dict[str, Any], tmp: Path) -> tuple[Registry, Any]:
    registry = Registry.from_config(cfg)
    adapter = make_random_adapter(models.resolve("tiny", cfg), tmp / "adapter", seed=11)
    item = registry.register(adapter, {"base_model": "tiny"})
    registry.promote(item.version, "test", merge=merge_into_base(cfg, progress=lambda _: None))
    return registry, item


def test_promote_saves_a_merged_checkpoint_with_the_same_logits(test_config: dict[str, Any], cobalt_home: Path,
                                                                 tmp_path: Path) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    registry, item = _promoted(test_config, tmp_path)
    merged = merged_dir(item.path)
    assert merged is not None and not list(item.path.glob(".merged-staging*"))
    assert registry.current_entry("tiny")["merged"] == str(merged)
    assert (merged / "tokenizer.json").is_file() and (merged / "chat_template.jinja").is_file()
    base_path = models.resolve("tiny", test_config)
    ids = AutoTokenizer.from_pretrained(merged)("def is_prime(n):", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        lora = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base_path), str(item.path))(ids).logits
        folded = AutoModelForCausalLM.from_pretrained(merged)(ids).logits
        bare = AutoModelForCausalLM.from_pretrained(base_path)(ids).logits
    assert torch.allclose(lora, folded, atol=1e-4) and not torch.allclose(bare, folded, atol=1e-3)
    cfg = copy.deepcopy(test_config)
    cfg["server"]["serve_merged"] = False
    assert merge_into_base(cfg) is None  # switched off: promote only hot-loads


@pytest.mark.server
def test_the_next_server_start_serves_the_merged_adapter(test_config: dict[str, Any], cobalt_home: Path,
                                                         tmp_path: Path, tiny_server) -> None:
    cfg = copy.deepcopy(test_config)
    cfg["server"]["port"] = free_port()
    _, item = _promoted(cfg, tmp_path)
    client = server.resolve_client(cfg, "tiny", progress=lambda _: None)  # starts the server
    info = server.running(cfg)
    try:
        assert info is not None and info.merged == item.name == client.adapter_version
        assert server.served_models(info.api_base) == [item.name]
        merged_text = client.chat(PROMPT, temperature=0.0, max_tokens=12).text
        server.load_adapter(tiny_server.api_base, "merge-test-v1", item.path)  # the same adapter, hot-loaded
        hot = tiny_server.chat_client(max_tokens=12)
        hot.model = "hosted_vllm/merge-test-v1"
        assert merged_text == hot.chat(PROMPT, temperature=0.0).text
        with pytest.raises(server.ServerError, match="merged into tiny"):
            server.resolve_client(cfg, "tiny", adapter="base", progress=lambda _: None)
    finally:
        server.stop(cfg)
        server.unload_adapter(tiny_server.api_base, "merge-test-v1")
    assert json.loads((cobalt_home / "adapters" / "current.json").read_text())["tiny"]["name"] == item.name
