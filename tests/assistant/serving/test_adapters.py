"""Served names of base models and adapter versions (assistant/serving/adapters.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.serving import adapters


def test_two_checkpoint_folders_named_alike_are_two_served_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cobalt eval --model runs/a/merged` then `runs/b/merged`: the store keys sessions by the
    served name, so one name for both would reuse a's sessions as b's results."""
    a, b = tmp_path / "a" / "merged", tmp_path / "b" / "merged"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    name_a, name_b = adapters.served_base_name(str(a)), adapters.served_base_name(str(b))
    assert name_a != name_b and name_a.startswith("merged-") and name_b.startswith("merged-")
    monkeypatch.chdir(tmp_path)
    assert adapters.served_base_name("a/merged") == name_a  # a relative path names the same folder
    assert adapters.served_name(str(a), 3) == f"{name_a}-v3"
    assert adapters.served_base_name("qwen-coder-1.5b") == "qwen-coder-1.5b"  # a prepared model: its name
