"""The adapter registry's layout on disk, read in this one place.

    <data>/adapters/v<N>/           a LoRA adapter (PEFT files) and `cobalt-adapter.json`
                                    (its metadata: base model, data hash, config, metrics)
    <data>/adapters/current.json    {"<base model>": {"version", "name", "path", ...}}
    <data>/adapters/history.jsonl   one line per register / promote / rollback

A version is served as `<base>-v<N>`, so a name always means the same weights. The
trainer's registry (`trainer.release.registry`) writes this layout with these names; the client
chooser reads it to serve the promoted adapter. This module reads paths and JSON only:
it neither writes, loads adapters into a server, nor imports the trainer.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

DIR = "adapters"
META = "cobalt-adapter.json"
CURRENT = "current.json"
HISTORY = "history.jsonl"


def adapters_root(data_dir: Path) -> Path:
    return Path(data_dir) / DIR


def version_dir(root: Path, version: int) -> Path:
    return Path(root) / f"v{int(version)}"


def served_base_name(model: str) -> str:
    """The name the server gives a base model: a prepared model's own name; a checkpoint directory
    is served under its folder's name and a short hash of its whole path, so two folders named
    alike (`runs/a/merged`, `runs/b/merged`) are two models to the store, the evaluations that
    reuse its sessions and the adapter registry, not one."""
    path = Path(model).expanduser()
    if not path.is_dir():
        return model
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]
    return f"{path.name}-{digest}"


def served_name(base_model: str, version: int) -> str:
    """The name version `version` of an adapter on `base_model` is served under."""
    return f"{served_base_name(base_model)}-v{int(version)}"


def read_current(root: Path) -> dict[str, Any]:
    """`current.json` as a dict ({} when missing or unreadable)."""
    try:
        data = json.loads((Path(root) / CURRENT).read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def current_adapter(root: Path, base_model: str) -> dict[str, Any] | None:
    """The promoted adapter's entry for `base_model`, when it names one and its path."""
    entry = read_current(root).get(base_model)
    return entry if isinstance(entry, dict) and entry.get("name") and entry.get("path") else None


def registered_version(root: Path, base_model: str, adapter: str) -> tuple[int, Path, str | None] | None:
    """(version, directory, the base model its metadata names) of the registered version
    that `adapter` (`vN` or `<base>-vN`) names, or None when there is no such adapter."""
    match = re.fullmatch(rf"(?:{re.escape(base_model)}-)?v(\d+)", adapter)
    if match is None:
        return None
    path = version_dir(root, int(match.group(1)))
    if not (path / "adapter_config.json").is_file():
        return None
    try:
        trained_on = json.loads((path / META).read_text()).get("base_model")
    except (FileNotFoundError, ValueError):
        trained_on = None
    return int(match.group(1)), path, None if trained_on is None else str(trained_on)
