"""The promotion gate end to end on the llama.cpp engine: SmolLM2's GGUF served by llama-server,
the current adapter and the candidate converted to GGUF LoRA files and loaded side by side (the
server restarted with each), every arm's requests choosing its weights with the `lora` field;
the real sandbox and SQLite store; the `test` training profile's small gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assistant.cli import main
from assistant.serving import hot_load, models, server
from assistant.settings_loader import load_settings
from tests.conftest import free_port, make_random_adapter
from trainer.release.registry import Registry

pytestmark = [pytest.mark.docker, pytest.mark.server, pytest.mark.slow]


def test_the_gate_runs_on_llama_cpp_with_two_adapters_loaded(
    cobalt_home: Path, tmp_path: Path, sandbox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COBALT__SERVER__ENGINE", "llama.cpp")
    config = tmp_path / "cobalt.yaml"
    port = free_port()
    config.write_text(
        yaml.safe_dump(
            {
                "model": {"name": "smollm2", "max_tokens": 48, "timeout_s": 120, "retries": 1},
                "server": {"engine": "llama.cpp", "port": port, "max_model_len": 2048, "llama": {"parallel": 2}},
                # the CPU profiles' merged arms: on llama.cpp every adapter is hot-loaded all the same
                "train": {"profile": "test", "gate": {"serve_merged": True}},
            }
        )
    )
    cfg = load_settings(config)
    base_dir = models.resolve("smollm2", cfg.paths)
    registry = Registry.open(cfg.paths)
    v1 = registry.register(make_random_adapter(base_dir, tmp_path / "v1", seed=1, std=0.03), {"base_model": "smollm2"})
    registry.promote(v1.version, "seeded by the test")
    v2 = registry.register(make_random_adapter(base_dir, tmp_path / "v2", seed=2, std=0.03), {"base_model": "smollm2"})
    info = server.ensure(cfg.server, cfg.paths, "smollm2", progress=lambda _: None)
    try:
        assert info.engine == "llama.cpp"
        capsys.readouterr()
        argv = ["--config", str(config), "adapters", "gate", f"v{v2.version}", "--server", info.api_base, "--json"]
        code = main(argv)
        out = capsys.readouterr()
        assert code == 0, out.err
        gate = json.loads(out.out)["gate"]
        assert (gate["candidate"], gate["current"]) == ("smollm2-v2", "smollm2-v1")
        assert [c["reference"] for c in gate["comparisons"]] == ["base", "current"] * 3
        assert set(gate["arm_seconds"]) == {"base", "current", "candidate"}
        assert set(gate["loaded"]) == {"smollm2-v1", "smollm2-v2"}
        assert hot_load.served_models(info.api_base) == ["smollm2", "smollm2-v1", "smollm2-v2"]
        assert server.running(cfg.paths).loras == ["smollm2-v1", "smollm2-v2"]  # one server, both adapters
    finally:
        server.stop(cfg.paths)
