"""Versioned LoRA adapters: register a trained adapter as the next version, promote one,
roll back, and list them, in the layout `assistant.serving.adapters` describes (and reads for the
assistant): `<data>/adapters/v<N>/`, `current.json`, `history.jsonl`; the last gate decision on
a version is kept as `v<N>/gate.json` (`cobalt adapters export` ships it). Promotion can first
save the adapter merged into its base (`v<N>/merged/`, `trainer.release.merge`), recorded as
`merged` in current.json and served at full speed on the next server start.

Version numbers are never reused; an adapter is served as `<base>-v<N>`, so a name always
means the same weights. Changes happen under a file lock and `current.json` is replaced
atomically (write, fsync, rename): a crash leaves either the old or the new file.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from filelock import FileLock

from assistant.errors import UserError
from assistant.serving import llama_server, models
from assistant.serving.adapters import (
    CURRENT,
    HISTORY,
    META,
    adapters_root,
    read_current,
    served_base_name,
    served_name,
    version_dir,
)
from assistant.settings import PathsSettings, Settings
from assistant.store import atomic
from assistant.store.jsonl_log import append_row, read_rows
from trainer.release.merge import merge_adapter, merged_dir

GATE = "gate.json"


@dataclass
class AdapterVersion:
    version: int
    path: Path
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def base_model(self) -> str:
        return str(self.meta.get("base_model", ""))

    @property
    def name(self) -> str:
        """The name it is served under: `<base>-v<N>`."""
        return served_name(self.base_model, self.version)

    def summary(self) -> dict[str, Any]:
        metrics = self.meta.get("metrics") or {}
        return {
            "version": self.version,
            "name": self.name,
            "base_model": self.base_model,
            "path": str(self.path),
            "parent": self.meta.get("parent_version"),
            "data_hash": self.meta.get("data_hash"),
            "created_at": self.meta.get("created_at"),
            "mean_reward": metrics.get("mean_reward"),
            "steps": metrics.get("steps"),
        }


class Registry:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.lock = FileLock(str(self.root / ".lock"), timeout=60)

    @classmethod
    def open(cls, paths: PathsSettings | None = None) -> "Registry":
        """The registry in the data directory of `paths` (default: resolved from the environment)."""
        return cls(adapters_root((paths or PathsSettings()).data_dir))

    # --- reads ------------------------------------------------------------------------

    def versions(self, base_model: str | None = None) -> list[AdapterVersion]:
        out = []
        for path in self.root.glob("v*"):
            if not (path.is_dir() and path.name[1:].isdigit() and (path / META).is_file()):
                continue
            item = AdapterVersion(int(path.name[1:]), path, json.loads((path / META).read_text()))
            if base_model is None or item.base_model == base_model:
                out.append(item)
        return sorted(out, key=lambda v: v.version)

    def get(self, version: int) -> AdapterVersion:
        path = version_dir(self.root, version)
        if not (path / META).is_file():
            raise UserError(f"there is no adapter version {version}; see `cobalt adapters list`")
        return AdapterVersion(int(version), path, json.loads((path / META).read_text()))

    def current(self, base_model: str) -> AdapterVersion | None:
        entry = self.current_entry(base_model)
        if not entry or entry.get("version") is None:
            return None
        try:
            return self.get(int(entry["version"]))
        except UserError:
            return None

    def current_entry(self, base_model: str) -> dict[str, Any] | None:
        """`current.json`'s entry for a base model, keyed as the server names it (a checkpoint
        folder's `<name>-<hash8>`), which is how serving looks the promoted adapter up."""
        return read_current(self.root).get(served_base_name(base_model))

    def gate_of(self, version: int) -> dict[str, Any] | None:
        """The last gate decision recorded on `version` (None: never gated)."""
        try:
            return json.loads((version_dir(self.root, version) / GATE).read_text())
        except (FileNotFoundError, ValueError):
            return None

    def with_weights(self, sha256: str) -> AdapterVersion | None:
        """The version whose metadata names these weights (`weights_sha256`, set by import), if any."""
        return next((v for v in self.versions() if v.meta.get("weights_sha256") == sha256), None)

    def from_training(self, meta: dict[str, Any]) -> AdapterVersion | None:
        """The version registered from this very saved adapter (its base model and the time it was
        saved, `created_at`), if any: a rerun of a finished `cobalt train --register` returns it."""
        key = (meta.get("created_at"), meta.get("base_model"))
        if key[0] is None:
            return None
        return next((v for v in self.versions() if (v.meta.get("created_at"), v.meta.get("base_model")) == key), None)

    def history(self, base_model: str | None = None) -> list[dict[str, Any]]:
        events = read_rows(self.root / HISTORY)
        return [e for e in events if base_model is None or e.get("base_model") == base_model]

    # --- changes ----------------------------------------------------------------------

    def _log(self, event: dict[str, Any]) -> None:
        append_row(self.root / HISTORY, {**event, "at": time.time()}, sync=True)

    def register(self, adapter_dir: Path, meta: dict[str, Any]) -> AdapterVersion:
        """Move a saved adapter into the registry as the next version (never reused)."""
        if not (Path(adapter_dir) / "adapter_config.json").is_file():
            raise UserError(f"{adapter_dir} holds no saved adapter (adapter_config.json is missing)")
        if not meta.get("base_model"):
            raise UserError("an adapter's metadata must name its base model")
        with self.lock:
            taken = [int(p.name[1:]) for p in self.root.glob("v*") if p.name[1:].isdigit()]
            version = max(taken, default=0) + 1
            staging = self.root / f".staging-v{version}"
            shutil.rmtree(staging, ignore_errors=True)
            shutil.copytree(adapter_dir, staging)
            full = {**meta, "version": version, "registered_at": time.time()}
            (staging / META).write_text(json.dumps(full, indent=2, sort_keys=True))
            atomic.replace_dir(staging, version_dir(self.root, version))
            self._log({"event": "register", "base_model": meta["base_model"], "version": version})
        return self.get(version)

    def register_once(self, adapter_dir: Path, meta: dict[str, Any]) -> tuple[AdapterVersion, bool]:
        """`register`, unless a version of the same base model already holds these weights
        (`meta["weights_sha256"]`): (that version, False). Checked under the registry's lock, so two
        imports at once make one version, not two."""
        with self.lock:
            existing = self.with_weights(str(meta["weights_sha256"]))
            if existing is not None and existing.base_model == meta.get("base_model"):
                return existing, False
            return self.register(adapter_dir, meta), True

    def record_gate(self, version: int, decision: dict[str, Any]) -> None:
        """Keep the gate's decision on `version` as `v<N>/gate.json` (replaced atomically)."""
        self.get(version)
        atomic.write_json(version_dir(self.root, version) / GATE, {**decision, "recorded_at": time.time()})

    def _set_current(self, base_model: str, version: AdapterVersion | None, reason: str, previous: int | None) -> None:
        data, base_model = read_current(self.root), served_base_name(base_model)
        if version is None:
            data.pop(base_model, None)
        else:
            merged = merged_dir(version.path)
            data[base_model] = {
                "version": version.version,
                "name": version.name,
                "path": str(version.path),
                "promoted_at": time.time(),
                "reason": reason,
                "previous": previous,
                "merged": str(merged) if merged else None,
            }
        atomic.write_json(self.root / CURRENT, data)

    def promote(
        self, version: int, reason: str, merge: Callable[[AdapterVersion], Any] | None = None
    ) -> AdapterVersion:
        """Make `version` the current adapter of its base model, recording why. `merge`
        (e.g. `merge_into_base`) makes its merged checkpoint first, outside the lock."""
        if merge is not None:
            merge(self.get(version))
        with self.lock:
            item = self.get(version)
            entry = self.current_entry(item.base_model) or {}
            previous = entry.get("version")
            if previous == item.version:
                raise UserError(f"adapter v{version} is already the current adapter of {item.base_model}")
            self._set_current(item.base_model, item, reason, previous)
            self._log(
                {
                    "event": "promote",
                    "base_model": item.base_model,
                    "version": item.version,
                    "previous": previous,
                    "reason": reason,
                }
            )
        return item

    def rollback(
        self, base_model: str, reason: str, to: int | None = None, to_base: bool = False
    ) -> AdapterVersion | None:
        """Go back to the adapter that was current before this one (or `to`, or the bare
        base model with `to_base`). Returns the new current adapter (None: the base)."""
        with self.lock:
            entry = self.current_entry(base_model)
            if entry is None and not to_base and to is None:
                raise UserError(f"{base_model} has no current adapter to roll back from")
            target = None if to_base else (to if to is not None else (entry or {}).get("previous"))
            item = self.get(int(target)) if target is not None else None
            if item is not None and item.base_model != base_model:
                raise UserError(f"adapter v{item.version} belongs to {item.base_model}, not {base_model}")
            previous = self._previous_of(item.version) if item is not None else None
            self._set_current(base_model, item, reason, previous)
            self._log(
                {
                    "event": "rollback",
                    "base_model": base_model,
                    "version": item.version if item else None,
                    "from": (entry or {}).get("version"),
                    "reason": reason,
                }
            )
        return item

    def _previous_of(self, version: int) -> int | None:
        """The adapter that was current when `version` was last promoted."""
        for event in reversed(self.history()):
            if event.get("event") == "promote" and event.get("version") == version:
                return event.get("previous")
        return None


def merge_into_base(
    settings: Settings, progress: Callable[[str], None] = print
) -> Callable[[AdapterVersion], Any] | None:
    """The `merge` step of `Registry.promote` when `server.serve_merged` is on and the engine is vLLM,
    else None (llama.cpp serves the adapter as a GGUF LoRA on the quantized base, never a merged
    checkpoint). A merge that fails is reported and skipped: the adapter is then served hot-loaded."""
    if not llama_server.serves_merged(settings.server, settings.server.serve_merged):
        return None

    def merge(item: AdapterVersion) -> None:
        try:
            merge_adapter(item.path, models.resolve(item.base_model, settings.paths), progress)
        except Exception as exc:  # an optimisation only: never block a promotion
            progress(
                f"warning: could not merge {item.name} into its base ({type(exc).__name__}: {exc}); "
                "it is served hot-loaded"
            )

    return merge
