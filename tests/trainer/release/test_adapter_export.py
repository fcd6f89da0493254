"""`cobalt adapters export|import` on a real LoRA adapter of the tiny model: the round trip keeps
the bf16 weights and the metadata (hashes, recipe, gate, reports), a changed weights file or
another base model is refused in one sentence, and importing twice registers one version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from assistant.cli import main
from assistant.errors import UserError
from assistant.serving import models
from tests.conftest import make_random_adapter
from trainer.release.adapter_export import (
    WEIGHTS,
    base_fingerprint,
    export_adapter,
    file_sha256,
    import_adapter,
)
from trainer.release.registry import Registry
from trainer.train_settings import ShipSettings

GATE = {
    "turns": 1,
    "items": 4,
    "tasks": 2,
    "metric": "fix_rate",
    "margin": 0.1,
    "comparisons": [{"reference": "base", "name": "tiny", "a": 0.5, "b": 0.75, "delta": 0.25, "lo": 0.0, "hi": 0.5}],
    "promote": True,
    "reason": "shown not worse",
    "incomplete": [],
}


def trained(settings: Any, tmp: Path, seed: int = 3) -> tuple[Registry, int]:
    """A registered version as `cobalt train --register` leaves it: a LoRA of tiny, the dataset
    it names, its training config, a recorded gate decision and an eval report."""
    dataset = tmp / "dataset"
    dataset.mkdir(parents=True)
    (dataset / "train.jsonl").write_text('{"prompt": "def f():", "prev": 0.0}\n')
    (dataset / "meta.json").write_text(json.dumps({"data_hash": "d" * 64}))
    adapter = make_random_adapter(models.resolve("tiny", settings.paths), tmp / "adapter", seed=seed)
    meta = {
        "base_model": "tiny",
        "base_model_path": str(models.resolve("tiny", settings.paths)),
        "data_hash": "d" * 64,
        "dataset": str(dataset),
        "config": {
            "profile": "test",
            "grpo": {"learning_rate": 1e-3, "seed": 7, "max_steps": 2},
            "lora": {"r": 8},
            "reward": {"thinking": False},
            "max_steps": 2,
            "max_minutes": 0,
        },
        "metrics": {"steps": 2, "mean_reward": 0.1},
        "rollouts": {"engine": "llama.cpp", "conversions": 2},
        "stopped_by_budget_at": None,
        "parent_version": None,
    }
    registry = Registry.open(settings.paths)
    item = registry.register(adapter, meta)
    registry.record_gate(item.version, GATE)
    report = settings.paths.data_dir / "eval" / f"{item.name}-humaneval-test" / "report.json"
    report.parent.mkdir(parents=True)
    report.write_text(json.dumps({"model": item.name, "adapter": None, "benchmark": "humaneval"}))
    other = settings.paths.data_dir / "eval" / "tiny-humaneval-test" / "report.json"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({"model": "tiny", "adapter": None}))
    return registry, item.version


def test_round_trip_keeps_bf16_weights_and_metadata(home_config: Any, tmp_path: Path) -> None:
    import torch
    from safetensors.torch import load_file

    registry, version = trained(home_config, tmp_path)
    out = tmp_path / "export" / "tiny-best"
    meta = export_adapter(registry, version, out, home_config.paths, ShipSettings(), progress=lambda _: None)
    assert not list(out.parent.glob(".*staging*"))
    original = load_file(str(registry.get(version).path / WEIGHTS))
    exported = load_file(str(out / WEIGHTS))
    assert set(original) == set(exported) and all(t.dtype == torch.bfloat16 for t in exported.values())
    assert all(torch.equal(original[k].to(torch.bfloat16), exported[k]) for k in original)
    assert meta["weights_sha256"] == file_sha256(out / WEIGHTS) and meta["weights_dtype"] == "bfloat16"
    assert meta["base_model_sha256"] == base_fingerprint("tiny", home_config.paths)["sha256"]
    assert meta["dataset_sha256"] == file_sha256(tmp_path / "dataset" / "train.jsonl")
    assert (out / "dataset" / "train.jsonl").read_bytes() == (tmp_path / "dataset" / "train.jsonl").read_bytes()
    assert meta["gate"]["promote"] and json.loads((out / "reports" / "gate.json").read_text())["promote"]
    assert sorted(p.name for p in (out / "reports").iterdir()) == ["gate.json", "tiny-v1-humaneval-test.json"]
    recipe = meta["recipe"]
    assert (recipe["max_steps"], recipe["seed"], recipe["max_minutes"], recipe["dataset"]) == (2, 7, 0, "dataset")
    assert "--max-steps 2 --seed 7 --no-budget" in recipe["command"]
    assert yaml.safe_load((out / "recipe.yaml").read_text())["train"]["max_minutes"] == 0
    assert set(meta["files"]) >= {WEIGHTS, "adapter_config.json", "recipe.yaml", "dataset/train.jsonl"}

    train = yaml.safe_load((out / "recipe.yaml").read_text())["train"]
    assert train["greedy_anchor"] is False and train["guide_anchor"] is False  # before they existed
    assert train["rollouts"] == {"engine": "llama.cpp"}  # sampled where it was trained
    assert recipe["parent"] is None and "--parent" not in recipe["command"]

    imported = import_adapter(registry, out, home_config.paths)
    item = imported.item
    assert imported.new and item.version == version + 1 and item.name == "tiny-v2"
    assert (item.path / WEIGHTS).read_bytes() == (out / WEIGHTS).read_bytes()
    kept = {k: v for k, v in item.meta.items() if k not in ("version", "registered_at", "imported_from", "origin")}
    assert kept == json.loads(json.dumps(meta)) and item.meta["origin"] == "import"
    assert registry.current("tiny") is None  # registered, not promoted
    again = export_adapter(registry, item.version, tmp_path / "again", home_config.paths, ShipSettings())
    assert again["weights_sha256"] == meta["weights_sha256"]  # bf16 stays bf16, byte for byte
    # another dataset now where the first was trained: the imported version exports its own copy ...
    (tmp_path / "dataset" / "meta.json").write_text(json.dumps({"data_hash": "e" * 64}))
    third = export_adapter(registry, item.version, tmp_path / "third", home_config.paths, ShipSettings())
    assert third["dataset_sha256"] == meta["dataset_sha256"]
    assert json.loads((tmp_path / "third" / "dataset" / "meta.json").read_text())["data_hash"] == "d" * 64
    with pytest.raises(UserError, match="is gone"):  # ... and the trained version has none
        export_adapter(registry, version, tmp_path / "fourth", home_config.paths, ShipSettings())


def test_import_twice_is_one_version_and_cli_promotes(
    home_config: Any, cobalt_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry, version = trained(home_config, tmp_path)
    out = tmp_path / "export"
    assert main(["adapters", "export", f"v{version}", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"exported v{version} to {out}" in said and "--no-budget" in said
    assert main(["adapters", "export", f"v{version}", str(out)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert main(["adapters", "import", str(out), "--promote"]) == 0
    said = capsys.readouterr().out
    assert "imported as v2 (tiny-v2)" in said and "v2 (tiny-v2) is now the current adapter of tiny" in said
    assert main(["adapters", "import", str(out)]) == 0
    assert "already registered as v2" in capsys.readouterr().out
    assert [v.version for v in registry.versions()] == [1, 2] and registry.current("tiny").version == 2


def test_tampered_weights_and_wrong_base_are_refused(home_config: Any, tmp_path: Path) -> None:
    registry, version = trained(home_config, tmp_path)
    out = tmp_path / "export"
    export_adapter(registry, version, out, home_config.paths, ShipSettings())
    fresh = Registry(tmp_path / "other-registry")

    def edited(name: str, change: dict[str, Any]) -> Path:
        copy = tmp_path / name
        shutil.copytree(out, copy)
        meta = json.loads((copy / "cobalt-adapter.json").read_text())
        (copy / "cobalt-adapter.json").write_text(json.dumps({**meta, **change}))
        return copy

    tampered = tmp_path / "tampered"
    shutil.copytree(out, tampered)
    blob = bytearray((tampered / WEIGHTS).read_bytes())
    blob[-1] ^= 1
    (tampered / WEIGHTS).write_bytes(bytes(blob))
    with pytest.raises(UserError, match="does not match the sha256 its metadata records"):
        import_adapter(fresh, tampered, home_config.paths)
    with pytest.raises(UserError, match="with sha256 00000000"):
        import_adapter(fresh, edited("other-base", {"base_model_sha256": "0" * 64}), home_config.paths)
    with pytest.raises(UserError, match="not prepared here"):
        import_adapter(fresh, edited("unknown-base", {"base_model": "no-such-model"}), home_config.paths)
    (tampered / "adapter_config.json").unlink()
    with pytest.raises(UserError, match="adapter_config.json is missing"):
        import_adapter(fresh, tampered, home_config.paths)
    with pytest.raises(UserError, match="is not a directory"):
        import_adapter(fresh, tmp_path / "nowhere", home_config.paths)
    meta = json.loads((out / "cobalt-adapter.json").read_text())
    unlisted = {name: sha for name, sha in meta["files"].items() if name != "adapter_config.json"}
    with pytest.raises(UserError, match="records no sha256 for adapter_config.json"):  # its rank would go unchecked
        import_adapter(fresh, edited("config-unlisted", {"files": unlisted}), home_config.paths)
    assert fresh.versions() == []


def test_import_registers_only_the_checked_files_once_under_concurrent_imports(
    home_config: Any, tmp_path: Path
) -> None:
    """An unlisted `merged/` beside the checked files was copied into the version and served as its
    merged checkpoint; two imports at once made two versions of the same weights."""
    import threading

    registry, version = trained(home_config, tmp_path)
    out = tmp_path / "export"
    export_adapter(registry, version, out, home_config.paths, ShipSettings())
    (out / "merged").mkdir()
    (out / "merged" / "config.json").write_text("{}")
    fresh = Registry(tmp_path / "other-registry")
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda: results.append(import_adapter(fresh, out, home_config.paths))) for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(fresh.versions()) == 1 and sorted(r.new for r in results) == [False, True]
    assert not (fresh.versions()[0].path / "merged").exists()


def test_export_needs_the_dataset_and_copies_only_small_ones(home_config: Any, tmp_path: Path) -> None:
    registry, version = trained(home_config, tmp_path)
    said: list[str] = []
    meta = export_adapter(
        registry, version, tmp_path / "big", home_config.paths, ShipSettings(max_dataset_mb=0), progress=said.append
    )
    assert not (tmp_path / "big" / "dataset").exists() and not meta["dataset_files"]["copied"]
    assert meta["recipe"]["dataset"] == str(tmp_path / "dataset") and "not copying it" in said[0]
    import_adapter(Registry(tmp_path / "r2"), tmp_path / "big", home_config.paths)  # its files still verify
    shutil.rmtree(tmp_path / "dataset")
    with pytest.raises(UserError, match="is gone"):
        export_adapter(registry, version, tmp_path / "none", home_config.paths, ShipSettings())


def test_a_child_of_an_imported_adapter_names_its_parent_and_recipe(home_config: Any, tmp_path: Path) -> None:
    registry, version = trained(home_config, tmp_path)
    shipped = tmp_path / "shipped" / "tiny-own-1"
    parent_meta = export_adapter(registry, version, shipped, home_config.paths, ShipSettings(), progress=lambda _: None)
    parent = import_adapter(registry, shipped, home_config.paths).item
    child = registry.get(version).meta | {"parent_version": parent.version, "parent_name": parent.name}
    child["config"] = {**child["config"], "greedy_anchor": True}
    adapter = make_random_adapter(models.resolve("tiny", home_config.paths), tmp_path / "child", seed=5)
    item = registry.register(adapter, child)

    meta = export_adapter(registry, item.version, tmp_path / "out", home_config.paths, ShipSettings())

    recipe = meta["recipe"]
    assert recipe["parent"] == {
        "name": "tiny-own-1",
        "weights_sha256": parent_meta["weights_sha256"],
        "imported_from": str(shipped.resolve()),
    }
    assert recipe["command"].endswith("--no-budget --parent PARENT")
    assert yaml.safe_load((tmp_path / "out" / "recipe.yaml").read_text())["train"]["greedy_anchor"] is True
