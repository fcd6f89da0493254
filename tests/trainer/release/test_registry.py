"""The adapter registry: versions never reused, atomic promotion with its reason, rollback,
`current.json` as the assistant reads it, and `cobalt adapters list|promote|rollback`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.errors import UserError
from assistant.serving.adapters import read_current
from trainer.release.registry import Registry


def fake_adapter(path: Path, tag: str = "a") -> Path:
    path.mkdir(parents=True)
    (path / "adapter_config.json").write_text(json.dumps({"r": 8, "tag": tag}))
    (path / "adapter_model.safetensors").write_bytes(b"weights-" + tag.encode())
    return path


def meta(base: str = "tiny", **extra) -> dict:
    return {"base_model": base, "data_hash": "d" * 64, "metrics": {"mean_reward": 0.1, "steps": 2}, **extra}


def test_register_numbers_versions_and_keeps_metadata(tmp_path: Path) -> None:
    reg = Registry(tmp_path / "adapters")
    v1 = reg.register(fake_adapter(tmp_path / "a1"), meta())
    v2 = reg.register(fake_adapter(tmp_path / "a2", "b"), meta(parent_version=1))
    assert (v1.version, v1.name, v2.version, v2.name) == (1, "tiny-v1", 2, "tiny-v2")
    assert (v2.path / "adapter_model.safetensors").read_bytes() == b"weights-b"
    assert reg.get(2).meta["parent_version"] == 1 and reg.get(2).meta["data_hash"] == "d" * 64
    assert [e["event"] for e in reg.history()] == ["register", "register"]
    with pytest.raises(UserError, match="adapter_config.json"):
        reg.register(tmp_path, meta())
    assert reg.current("tiny") is None


def test_promote_and_rollback_chain(tmp_path: Path) -> None:
    reg = Registry(tmp_path / "adapters")
    for i in range(3):
        reg.register(fake_adapter(tmp_path / f"a{i}"), meta())
    reg.promote(1, "first night")
    reg.promote(2, "second night")
    reg.promote(3, "third night")
    current = read_current(reg.root)["tiny"]
    assert (current["version"], current["name"], current["previous"], current["reason"]) == (
        3,
        "tiny-v3",
        2,
        "third night",
    )
    assert Path(current["path"]) == reg.root / "v3"
    with pytest.raises(UserError, match="already the current"):
        reg.promote(3, "again")
    assert reg.rollback("tiny", "v3 broke X").version == 2
    assert read_current(reg.root)["tiny"]["previous"] == 1  # v2's own predecessor
    assert reg.rollback("tiny", "still bad").version == 1
    assert reg.rollback("tiny", "to base", to_base=True) is None
    assert "tiny" not in read_current(reg.root)
    assert reg.rollback("tiny", "v3 was fine after all", to=3).version == 3
    events = [(e["event"], e.get("version"), e.get("reason")) for e in reg.history("tiny") if e["event"] != "register"]
    assert events[-1] == ("rollback", 3, "v3 was fine after all") and len(events) == 7
    assert not list(reg.root.glob(".*.tmp"))  # atomic writes leave nothing behind


def test_the_promoted_adapter_of_a_checkpoint_folder_is_found_under_its_served_name(tmp_path: Path) -> None:
    """Trained with `--model runs/merged` (a folder), promoted: current.json was keyed by the path
    as typed and serving looked it up by the served name, so the adapter was never served."""
    from assistant.serving.adapters import current_adapter, served_base_name

    folder = tmp_path / "runs" / "merged"
    folder.mkdir(parents=True)
    reg = Registry(tmp_path / "adapters")
    reg.register(fake_adapter(tmp_path / "a1"), meta(str(folder)))
    reg.promote(1, "night")
    served = served_base_name(str(folder))
    assert current_adapter(reg.root, served)["version"] == 1  # what the server start reads
    assert reg.current(str(folder)).version == 1 and reg.current_entry(str(folder))["version"] == 1


def test_versions_are_per_base_but_numbers_are_global(tmp_path: Path) -> None:
    reg = Registry(tmp_path / "adapters")
    reg.register(fake_adapter(tmp_path / "a"), meta("tiny"))
    other = reg.register(fake_adapter(tmp_path / "b"), meta("qwen-coder"))
    assert other.name == "qwen-coder-v2"
    reg.promote(2, "qwen night")
    assert reg.current("tiny") is None and reg.current("qwen-coder").version == 2
    with pytest.raises(UserError, match="belongs to qwen-coder"):
        reg.rollback("tiny", "wrong base", to=2)


def test_adapters_cli(cobalt_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reg = Registry(cobalt_home / "adapters")
    reg.register(fake_adapter(tmp_path / "a"), meta())
    reg.register(fake_adapter(tmp_path / "b"), meta())
    assert main(["adapters", "promote", "v1", "--reason", "by hand"]) == 0
    assert main(["adapters", "promote", "2", "--reason", "better"]) == 0
    capsys.readouterr()
    assert main(["adapters", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [a["current"] for a in listed["adapters"]] == [False, True]
    assert listed["current"]["tiny"]["reason"] == "better"
    assert main(["adapters", "rollback", "--model", "tiny", "--reason", "regression"]) == 0
    assert "v1 (tiny-v1) is now the current adapter" in capsys.readouterr().out
    assert main(["adapters", "list"]) == 0
    assert capsys.readouterr().out.startswith("* v1")
    assert main(["adapters", "promote", "9", "--reason", "x"]) == 1
    assert "no adapter version 9" in capsys.readouterr().err
