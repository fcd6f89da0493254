"""`cobalt adapters list|promote|rollback|gate|export|import`: the adapter registry. Promotion
and rollback are atomic and record why; when the model server runs, the new current adapter is
hot-loaded under its own name. `gate` runs the nightly promotion gate on a version trained
by hand (`cobalt train --register`) and, with --promote, promotes it only if it passes.
`export VERSION DIR` writes a version with its hashes, recipe, dataset and reports
(`trainer.release.adapter_export`); `import DIR` checks them and registers a new version."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.console import action_parsers, add_action, add_json, print_result
from assistant.errors import UserError
from assistant.serving import hot_load, server
from assistant.serving.adapters import read_current, served_base_name
from trainer.cli.train_options import add_profile, progress
from trainer.release.adapter_export import describe_import, export_adapter, import_adapter
from trainer.release.nightly import Retrain
from trainer.release.registry import Registry, merge_into_base
from trainer.train_settings import load_train_settings

if TYPE_CHECKING:
    from assistant.settings import PathsSettings, Settings


def register(sub: argparse._SubParsersAction) -> None:
    actions = action_parsers(sub, "adapters", "list, promote, roll back, export or import LoRA adapter versions")
    p = add_action(actions, "list", list_cmd, "list adapter versions (* marks the current one)")
    p.add_argument("--model", help="only adapters of this base model")
    add_json(p)
    p = add_action(actions, "promote", promote_cmd, "make a version the current adapter of its base model")
    p.add_argument("version", help="version number (e.g. 3 or v3)")
    p.add_argument("--reason", required=True, help="why (recorded in the history)")
    p = add_action(actions, "rollback", rollback_cmd, "go back to the previous current adapter")
    p.add_argument("--model", help="base model (default: config model.name)")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--to", help="roll back to this version instead of the previous one")
    target.add_argument("--base", action="store_true", help="serve the bare base model")
    p.add_argument("--reason", required=True, help="why (recorded in the history)")
    p = add_action(
        actions,
        "gate",
        gate_cmd,
        "run the promotion gate on a version (vs the base model and the current adapter); "
        "exit code 1 when it does not pass",
    )
    p.add_argument("version", help="version number (e.g. 3 or v3)")
    p.add_argument("--promote", action="store_true", help="promote the version when the gate passes it")
    p.add_argument("--server", metavar="URL", help="api base of a running base-model server (default: the data dir's)")
    add_json(p)
    add_profile(p)
    p = add_action(
        actions,
        "export",
        export_cmd,
        "write a version to a new directory: bf16 weights, sha256 of weights, base model and dataset, "
        "the recipe, the dataset and the reports",
    )
    p.add_argument("version", help="version number (e.g. 3 or v3)")
    p.add_argument("dir", type=Path, help="the new directory")
    p.add_argument("--report", type=Path, action="append", default=[], help="one more report to include")
    add_json(p, "print the written metadata")
    p = add_action(actions, "import", import_cmd, "check an exported adapter and register it as a new version")
    p.add_argument("dir", type=Path, help="a directory written by `cobalt adapters export`")
    p.add_argument("--promote", action="store_true", help="also make it the current adapter of its base model")
    p.add_argument("--reason", help="why it is promoted (default: imported from DIR)")


def _version(text: str) -> int:
    if not text.lstrip("v").isdigit():
        raise UserError(f"{text!r} is not a version number (e.g. 3 or v3)")
    return int(text.lstrip("v"))


def _hotload(paths: PathsSettings, item: Any) -> str:
    info = server.running(paths)
    if info is None or item is None or info.model != served_base_name(item.base_model):
        return ""
    if info.merged:
        return f"; the server serves {info.merged} merged: restart it (`cobalt serve --stop`) to serve this one"
    if item.name not in hot_load.served_models(info.api_base):
        hot_load.load_adapter(info.api_base, item.name, item.path)
    return f"; loaded into the server at {info.api_base}"


def list_cmd(args: argparse.Namespace, config: Settings) -> int:
    registry = Registry.open(config.paths)
    current = read_current(registry.root)
    items = [
        v.summary() | {"current": (registry.current_entry(v.base_model) or {}).get("version") == v.version}
        for v in registry.versions(args.model)
    ]
    return print_result(args.json, {"adapters": items, "current": current}, lambda listed: _listing(listed["adapters"]))


def _listing(items: list[dict[str, Any]]) -> str:
    """A line per version (* marks the current one), or where versions come from when there are none."""
    if not items:
        return "no adapters yet; `cobalt retrain` or `cobalt train --register` creates them"
    lines = []
    for item in items:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(item["created_at"] or 0))
        reward = "-" if item["mean_reward"] is None else f"{item['mean_reward']:+.3f}"
        lines.append(
            f"{'*' if item['current'] else ' '} v{item['version']:<4} {item['name']:<28} {when}  "
            f"parent {item['parent'] or '-':<4} data {str(item['data_hash'] or '-')[:10]}  "
            f"steps {item['steps'] or '-'}  mean reward {reward}"
        )
    return "\n".join(lines)


def promote_cmd(args: argparse.Namespace, config: Settings) -> int:
    item = Registry.open(config.paths).promote(_version(args.version), args.reason, merge=merge_into_base(config))
    print(
        f"v{item.version} ({item.name}) is now the current adapter of {item.base_model}{_hotload(config.paths, item)}"
    )
    return 0


def rollback_cmd(args: argparse.Namespace, config: Settings) -> int:
    model = args.model or config.model.name
    to = _version(args.to) if args.to else None
    item = Registry.open(config.paths).rollback(model, args.reason, to=to, to_base=args.base)
    if item is None:
        print(f"{model} now serves the bare base model")
    else:
        print(f"v{item.version} ({item.name}) is now the current adapter of {model}{_hotload(config.paths, item)}")
    return 0


def gate_cmd(args: argparse.Namespace, config: Settings) -> int:
    version = _version(args.version)
    item = Registry.open(config.paths).get(version)
    model = item.base_model
    job = Retrain(
        config, load_train_settings(config.train, args.profile), model=model, api_base=args.server, progress=progress
    )
    result = job.gate(version, promote=args.promote)
    decision, promoted = result["gate"], result["promote"]
    if args.json:
        print(json.dumps(result, default=str))
    else:
        # the reason was already shown as progress (stderr); stdout says what it led to
        verdict = "passes" if decision["promote"] else "does not pass"
        outcome = ""
        if promoted["promoted"]:
            outcome = f"; it is now the current adapter of {model}{_hotload(config.paths, item)}"
        elif decision["promote"]:
            outcome = "; not promoted (add --promote)"
        print(
            f"v{version} ({decision['candidate']}) {verdict} the gate on {decision['items']} repair items of "
            f"{decision['tasks']} tasks and {decision.get('natural_tasks', 0)} natural tasks{outcome}"
        )
    return 0 if decision["promote"] else 1


def export_cmd(args: argparse.Namespace, config: Settings) -> int:
    ship = load_train_settings(config.train).ship
    meta = export_adapter(
        Registry.open(config.paths), _version(args.version), args.dir, config.paths, ship, args.report, progress
    )
    return print_result(args.json, meta, lambda written: _exported(written, args.dir), default=str)


def _exported(meta: dict[str, Any], out: Path) -> str:
    """What `adapters export` wrote to `out`: the weights' hash, the files, the dataset, the gate and the recipe."""
    data = meta["dataset_files"]
    where = f"copied into {out / 'dataset'}" if data["copied"] else f"not copied (too large): {data['path']}"
    return (
        f"exported v{meta['exported_from']['version']} to {out}: weights sha256 {meta['weights_sha256'][:16]}..., "
        f"{len(meta['files'])} files; dataset {where}; gate {'recorded' if meta['gate'] else 'never run'}\n"
        f"recipe: {meta['recipe']['command']}"
    )


def import_cmd(args: argparse.Namespace, config: Settings) -> int:
    registry = Registry.open(config.paths)
    result = import_adapter(registry, args.dir, config.paths)
    print(describe_import(result))
    if args.promote:
        item = result.item
        if (registry.current_entry(item.base_model) or {}).get("version") == item.version:
            print(f"v{item.version} is already the current adapter of {item.base_model}")
            return 0
        registry.promote(item.version, args.reason or f"imported from {args.dir}", merge=merge_into_base(config))
        print(
            f"v{item.version} ({item.name}) is now the current adapter of {item.base_model}"
            f"{_hotload(config.paths, item)}"
        )
    return 0
