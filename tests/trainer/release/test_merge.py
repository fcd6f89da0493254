"""The promoted adapter merged into its base (tiny model): promote makes `v<N>/merged`
atomically, its logits equal the base + LoRA's, and the next server start for the assistant
serves it under the adapter's name (answering as the hot-loaded adapter does; `--adapter vN`
of that version uses it too), while callers that need the bare base are refused with one
sentence."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from assistant.runtime import open_client
from assistant.serving import hot_load, models, server
from tests.conftest import free_port, make_random_adapter
from trainer.release.merge import merge_adapter, merged_dir
from trainer.release.registry import Registry, merge_into_base

PROMPT = [{"role": "user", "content": "def is_prime(n):"}]


def _promoted(settings: Any, tmp: Path) -> tuple[Registry, Any]:
    registry = Registry.open(settings.paths)
    adapter = make_random_adapter(models.resolve("tiny", settings.paths), tmp / "adapter", seed=11)
    item = registry.register(adapter, {"base_model": "tiny"})
    registry.promote(item.version, "test", merge=merge_into_base(settings, progress=lambda _: None))
    return registry, item


def test_promote_saves_a_merged_checkpoint_with_the_same_logits(home_config: Any, tmp_path: Path) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    registry, item = _promoted(home_config, tmp_path)
    merged = merged_dir(item.path)
    assert merged is not None and not list(item.path.glob("merged.partial-*"))
    assert registry.current_entry("tiny")["merged"] == str(merged)
    assert (merged / "tokenizer.json").is_file() and (merged / "chat_template.jinja").is_file()
    base_path = models.resolve("tiny", home_config.paths)
    ids = AutoTokenizer.from_pretrained(merged)("def is_prime(n):", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        lora = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base_path), str(item.path))(ids).logits
        folded = AutoModelForCausalLM.from_pretrained(merged)(ids).logits
        bare = AutoModelForCausalLM.from_pretrained(base_path)(ids).logits
    assert torch.allclose(lora, folded, atol=1e-4) and not torch.allclose(bare, folded, atol=1e-3)
    off = home_config.model_copy(update={"server": home_config.server.model_copy(update={"serve_merged": False})})
    assert merge_into_base(off) is None  # switched off: promote only hot-loads


def test_two_merges_of_one_adapter_at_once_make_one_checkpoint(home_config: Any, tmp_path: Path) -> None:
    """A promote and a gate merging the same adapter together: the second waits under the lock and
    reuses the first one's checkpoint (they shared one staging directory and could remove each
    other's half-written weights)."""
    base_path = models.resolve("tiny", home_config.paths)
    adapter = make_random_adapter(base_path, tmp_path / "adapter", seed=12)
    said: list[str] = []
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda _: merge_adapter(adapter, base_path, progress=said.append), range(2)))
    assert done[0] == done[1] == merged_dir(adapter) and (done[0] / "tokenizer.json").is_file()
    assert sum(line.startswith("merging adapter") for line in said) == 1, said
    assert not list(adapter.glob("merged.partial-*"))


@pytest.mark.server
def test_the_next_server_start_serves_the_merged_adapter(home_config: Any, tmp_path: Path, tiny_server) -> None:
    settings = home_config.model_copy(update={"server": home_config.server.model_copy(update={"port": free_port()})})
    _, item = _promoted(settings, tmp_path)
    client = open_client(settings, "tiny")  # starts the server on the merged checkpoint
    info = server.running(settings.paths)
    try:
        assert info is not None and info.merged == item.name == client.adapter_version
        assert hot_load.served_models(info.api_base) == [item.name]
        merged_text = client.chat(PROMPT, temperature=0.0, max_tokens=12).text
        hot_load.load_adapter(tiny_server.api_base, "merge-test-v1", item.path)  # the same adapter, hot-loaded
        hot = tiny_server.chat_client(max_tokens=12)
        hot.model = "hosted_vllm/merge-test-v1"
        assert merged_text == hot.chat(PROMPT, temperature=0.0).text
        same = open_client(settings, "tiny", adapter=f"v{item.version}", progress=lambda _: None)
        assert same.model == f"hosted_vllm/{item.name}" and same.adapter_version == item.name
        assert hot_load.served_models(info.api_base) == [item.name]  # the merged one, nothing hot-loaded
        with pytest.raises(server.ServerError, match="merged into tiny"):
            open_client(settings, "tiny", adapter="base")
    finally:
        server.stop(settings.paths)
        hot_load.unload_adapter(tiny_server.api_base, "merge-test-v1")
    assert json.loads((settings.paths.data_dir / "adapters" / "current.json").read_text())["tiny"]["name"] == item.name
