"""The shipped adapter: the best adapter so far, committed as an export under `ship.dir`
(`examples/adapters/<name>/`, `trainer.release.adapter_export`) with the dataset it was
trained on. Before the assistant serves a local model with its default adapter
(`assistant.runtime.before_serve`, through the `cobalt.before_serve` entry point), `before_serve`
imports the shipped adapter of that base model when its recorded gate passed it against the
base, and promotes it (merged into the base with `server.serve_merged`) unless the user has
chosen otherwise:

- already imported (the same weights are a registered version): nothing changes, so a user's
  later promotion or rollback stays;
- no current adapter and no promotion or rollback ever recorded for that base: import and promote;
- the current adapter is an earlier shipped one: import and promote (a better one replaced it);
- any other current adapter, or a rollback to the bare base: import only, not promoted.

`--adapter base` (or `model.adapter: base`) skips all of this and serves the bare model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from assistant.config_files import REPO_CONFIGS
from assistant.errors import UserError
from assistant.serving.adapters import META
from assistant.settings import Settings
from trainer.release.adapter_export import import_adapter
from trainer.release.registry import AdapterVersion, Registry, merge_into_base
from trainer.train_settings import ship_settings

REPO = REPO_CONFIGS.parent
ORIGIN = "shipped"


@dataclass
class Shipped:
    path: Path
    meta: dict[str, Any]

    @property
    def base_model(self) -> str:
        return str(self.meta.get("base_model", ""))


@dataclass
class Plan:
    """What `before_serve` does: `none`, `import` or `promote` (import, then promote)."""

    action: str
    shipped: Shipped | None = None
    why: str = ""


def passed_against_base(gate: dict[str, Any] | None) -> bool:
    """The recorded gate decision shows the adapter not worse than the bare base model: every
    run complete and the base comparison's interval lower end above -margin."""
    if not isinstance(gate, dict) or gate.get("incomplete"):
        return False
    margin = float(gate.get("margin", 0.0))
    base = [c for c in gate.get("comparisons") or [] if c.get("reference") == "base"]
    return bool(base) and all(c.get("lo") is not None and float(c["lo"]) > -margin for c in base)


def shipped_adapters(root: Path) -> list[Shipped]:
    """The exported adapters under `root` (one directory each; none when `root` is missing)."""
    found = []
    for path in sorted(Path(root).glob(f"*/{META}")):
        try:
            meta = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(meta, dict) and meta.get("weights_sha256"):
            found.append(Shipped(path.parent, meta))
    return found


def plan(
    model: str,
    shipped: list[Shipped],
    registered: list[AdapterVersion],
    current: AdapterVersion | None,
    history: list[dict[str, Any]],
) -> Plan:
    """Decide what to do for `model` (see the module doc); decides only, changes nothing."""
    ready = [s for s in shipped if s.base_model == model and passed_against_base(s.meta.get("gate"))]
    if not ready:
        return Plan("none", why=f"no shipped adapter of {model} passed the gate against the base")
    best = max(ready, key=lambda s: _lower_end(s.meta.get("gate")))
    chosen = [e for e in history if e.get("event") in ("promote", "rollback") and e.get("base_model") == model]
    imported = [v for v in registered if v.meta.get("weights_sha256") == best.meta["weights_sha256"]]
    if imported:
        # imported before, its promotion cut short (Ctrl-C in the merge, the registry lock's timeout):
        # promoted now when nothing else was chosen since; otherwise it stays as it is
        if current is None and not chosen:
            return Plan("promote", best, f"it was imported as v{imported[0].version} but never promoted")
        return Plan("none", best, "already imported")
    if current is None and not chosen:
        return Plan("promote", best, f"{model} has no current adapter")
    if current is not None and current.meta.get("origin") == ORIGIN:
        return Plan("promote", best, f"it replaces the shipped adapter v{current.version}")
    keep = f"v{current.version}" if current is not None else "the bare base model (rolled back)"
    return Plan("import", best, f"the current choice for {model}, {keep}, stays")


def _lower_end(gate: dict[str, Any] | None) -> float:
    base = [c for c in (gate or {}).get("comparisons") or [] if c.get("reference") == "base"]
    return min((float(c["lo"]) for c in base), default=float("-inf"))


def before_serve(settings: Settings, model: str, progress: Callable[[str], None] = print) -> Plan:
    """The `cobalt.before_serve` hook: carry out `plan` for `model`'s shipped adapter."""
    ship = ship_settings(settings.train)
    shipped = shipped_adapters(REPO / ship.dir)
    if not shipped:
        return Plan("none", why="no shipped adapter")
    registry = Registry.open(settings.paths)
    decided = plan(model, shipped, registry.versions(model), registry.current(model), registry.history(model))
    if decided.action == "none" or decided.shipped is None:
        return decided
    source = decided.shipped.path
    try:
        result = import_adapter(registry, source, settings.paths, origin=ORIGIN)
    except UserError as exc:
        progress(f"warning: the shipped adapter {source.name} was not imported: {exc}")
        return Plan("none", decided.shipped, str(exc))
    item = result.item
    if result.new:
        progress(f"imported the shipped adapter {source.name} as v{item.version} ({item.name})")
    if decided.action == "promote":
        reason = f"shipped adapter {source.name} passed the gate against the base; {decided.why}"
        registry.promote(item.version, reason, merge=merge_into_base(settings, progress))
        progress(f"v{item.version} ({item.name}) is now the current adapter of {model}")
    else:
        progress(f"not promoted: {decided.why} (`cobalt adapters promote v{item.version}` to serve it)")
    return decided
