"""`cobalt adapters export|import`: a registered adapter as a self-contained directory, and back.

    DIR/adapter_model.safetensors   the LoRA weights, converted to bfloat16
    DIR/adapter_config.json         PEFT's config
    DIR/recipe.yaml                 the `train:` settings it was trained with (a --config file)
    DIR/dataset/                    the dataset it was trained on (when at most ship.max_dataset_mb)
    DIR/reports/                    its last gate decision (gate.json) and the eval reports found
    DIR/cobalt-adapter.json         the metadata: the training metadata, plus `files` (the sha256
                                    of every other file), `weights_sha256`, `base_model_sha256`,
                                    `dataset_sha256`, the `recipe` and the `gate` decision

The base model is identified by the published sha256 its prepared checkpoint was made from
(`cobalt-model.json`, `assistant.serving.models`), else by the sha256 of its weight files. Import
checks every hash and the base model before registering a new version (never promoted unless
asked); the same weights imported twice are one version. Both write atomically (a staging
directory renamed into place).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from assistant.errors import UserError
from assistant.serving import models
from assistant.serving.adapters import META, served_name
from assistant.settings import PathsSettings
from assistant.store import atomic
from trainer.release.registry import AdapterVersion, Registry
from trainer.train_settings import ShipSettings

FORMAT = 1
WEIGHTS = "adapter_model.safetensors"
CONFIG = "adapter_config.json"
RECIPE = "recipe.yaml"
DATASET = "dataset"
REPORTS = "reports"
DATASET_FILE = "train.jsonl"  # the rows the adapter was trained on
Progress = Callable[[str], None]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def base_fingerprint(name: str, paths: PathsSettings) -> dict[str, str]:
    """{"name", "sha256", "of"}: the published sha256 the prepared model was made from, else
    the sha256 of its weight files (name and hash of each, in order)."""
    path = models.resolve(name, paths)
    try:
        published = json.loads((path / models.MARKER).read_text()).get("sha256")
    except (FileNotFoundError, ValueError):
        published = None
    if published:
        return {"name": name, "sha256": str(published), "of": "the published file it was prepared from"}
    weights = sorted([*path.glob("*.safetensors"), *path.glob("*.bin")])
    if not weights:
        raise UserError(f"the base model {name} at {path} has no weight files to identify it by")
    listing = "".join(f"{p.name} {file_sha256(p)}\n" for p in weights)
    return {"name": name, "sha256": hashlib.sha256(listing.encode()).hexdigest(), "of": "its weight files"}


def eval_reports(data_dir: Path, item: AdapterVersion) -> list[Path]:
    """The eval reports under `<data>/eval/` made with this version (by `--adapter` or as current)."""
    names = {item.name, f"v{item.version}"}
    found = []
    for path in sorted((Path(data_dir) / "eval").glob("*/report.json")):
        try:
            report = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(report, dict) and (report.get("adapter") in names or report.get("model") == item.name):
            found.append(path)
    return found


def _bf16_weights(source: Path, dest: Path) -> None:
    """The adapter's weights as bfloat16 safetensors (other dtypes kept as they are)."""
    import torch
    from safetensors.torch import load_file, save_file

    if (source / WEIGHTS).is_file():
        tensors = load_file(str(source / WEIGHTS))
    elif (source / "adapter_model.bin").is_file():
        tensors = torch.load(str(source / "adapter_model.bin"), map_location="cpu", weights_only=True)
    else:
        raise UserError(f"{source} holds no adapter weights ({WEIGHTS} is missing)")
    out = {k: (v.to(torch.bfloat16) if v.is_floating_point() else v).contiguous() for k, v in tensors.items()}
    save_file(out, str(dest), metadata={"format": "pt"})


def _recipe(
    meta: dict[str, Any], dataset: str, parent: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the recipe, the `train:` config it runs with): a fixed step count, a seed, no budget.
    An adapter trained on from a parent needs that parent first: `parent` (its name and weights
    hash) is recorded, and the command continues from `--parent PARENT`, the version the parent
    has in the registry it is imported into (match it by `weights_sha256`)."""
    config = meta.get("config") or {}
    grpo = dict(config.get("grpo") or {})
    steps = int((meta.get("metrics") or {}).get("steps") or config.get("max_steps") or 0)
    seed = int(grpo.get("seed", 0))
    train = {
        "grpo": grpo,
        "lora": config.get("lora") or {},
        "reward": config.get("reward") or {},
        "max_minutes": 0,
        "greedy_anchor": bool(config.get("greedy_anchor", False)),  # absent: trained before it existed
        "guide_anchor": bool(config.get("guide_anchor", False)),
    }
    engine = (meta.get("rollouts") or {}).get("engine")
    if engine:  # where the completions were generated: the same engine samples the same way
        train["rollouts"] = {"engine": engine}
    command = [
        "cobalt",
        "--config",
        RECIPE,
        "train",
        "--dataset",
        dataset,
        "--model",
        str(meta.get("base_model")),
        "--profile",
        str(config.get("profile")),
        "--max-steps",
        str(steps),
        "--seed",
        str(seed),
        "--no-budget",
        *(["--parent", "PARENT"] if meta.get("parent_version") is not None else []),
    ]
    recipe = {
        "dataset": dataset,
        "config": RECIPE,
        "profile": config.get("profile"),
        "max_steps": steps,
        "seed": seed,
        "max_minutes": 0,
        "parent_version": meta.get("parent_version"),
        "parent": parent,
        "stopped_by_budget_at": meta.get("stopped_by_budget_at"),
        "command": shlex.join(command),
    }
    return recipe, {"train": train}


def _dataset_dir(version_dir: Path, meta: dict[str, Any]) -> Path | None:
    """The dataset the version was trained on: where training read it (`dataset`), else the copy
    an imported version carries (`v<N>/dataset`); only one whose `data_hash` is the version's."""
    for place in (Path(str(meta.get("dataset") or "")), version_dir / DATASET):
        if not (place / DATASET_FILE).is_file():
            continue
        try:
            data_hash = json.loads((place / "meta.json").read_text()).get("data_hash")
        except (OSError, ValueError, AttributeError):
            data_hash = None
        if meta.get("data_hash") is None or data_hash == meta["data_hash"]:
            return place
    return None


def _parent(registry: Registry, meta: dict[str, Any]) -> dict[str, Any] | None:
    """The parent adapter an export was trained on from: its name, its weights' sha256 (as an
    export of it records them, when it was imported) and where it was imported from."""
    version = meta.get("parent_version")
    if version is None:
        return None
    try:
        item = registry.get(int(version))
    except UserError:
        return {"name": meta.get("parent_name"), "weights_sha256": None, "imported_from": None}
    imported = item.meta.get("imported_from")
    return {
        "name": Path(imported).name if imported else item.name,
        "weights_sha256": item.meta.get("weights_sha256"),
        "imported_from": imported,
    }


def export_adapter(
    registry: Registry,
    version: int,
    out: Path,
    paths: PathsSettings,
    ship: ShipSettings,
    reports: list[Path] | None = None,
    progress: Progress = print,
) -> dict[str, Any]:
    """Write version `version` to the new directory `out` (see the module doc); its metadata."""
    out = Path(out)
    if out.exists():
        raise UserError(f"{out} already exists; export into a new directory")
    item = registry.get(version)
    meta = dict(item.meta)
    base = base_fingerprint(item.base_model, paths)
    dataset_dir = _dataset_dir(item.path, meta)
    if dataset_dir is None:
        raise UserError(
            f"the dataset v{version} was trained on ({meta.get('dataset')}) is gone; an export needs it for the recipe"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.staging-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        _bf16_weights(item.path, staging / WEIGHTS)
        shutil.copy2(item.path / CONFIG, staging / CONFIG)
        data_files = sorted(p for p in dataset_dir.iterdir() if p.is_file() and not p.name.startswith("."))
        size_mb = sum(p.stat().st_size for p in data_files) / 2**20
        copied = size_mb <= ship.max_dataset_mb
        dataset_hashes = {p.name: file_sha256(p) for p in data_files}
        if copied:
            (staging / DATASET).mkdir()
            for p in data_files:
                shutil.copy2(p, staging / DATASET / p.name)
        else:
            progress(
                f"the dataset is {size_mb:.0f} MB, over ship.max_dataset_mb={ship.max_dataset_mb:g}: "
                f"recording its path and hashes, not copying it"
            )
        (staging / REPORTS).mkdir()
        gate = registry.gate_of(version)
        if gate is not None:
            atomic.write_json(staging / REPORTS / "gate.json", gate)
        for path in [*eval_reports(paths.data_dir, item), *(reports or [])]:
            if not Path(path).is_file():
                raise UserError(f"no report at {path}")
            name = Path(path).parent.name if Path(path).name == "report.json" else Path(path).stem
            shutil.copy2(path, staging / REPORTS / f"{name}.json")
        recipe, config = _recipe(meta, DATASET if copied else str(dataset_dir), _parent(registry, meta))
        (staging / RECIPE).write_text(yaml.safe_dump(config, sort_keys=True))
        files = {p.relative_to(staging).as_posix(): file_sha256(p) for p in sorted(staging.rglob("*")) if p.is_file()}
        for local in ("version", "registered_at", "base_model_path", "weights_sha256", "imported_from"):
            meta.pop(local, None)
        exported = {
            **meta,
            "format": FORMAT,
            "exported_from": {"version": item.version, "name": item.name, "at": time.time()},
            "files": files,
            "weights_sha256": files[WEIGHTS],
            "weights_dtype": "bfloat16",
            "base_model_sha256": base["sha256"],
            "base_model_sha256_of": base["of"],
            "dataset_sha256": dataset_hashes[DATASET_FILE] if DATASET_FILE in dataset_hashes else None,
            "dataset_files": {"copied": copied, "path": recipe["dataset"], "sha256": dataset_hashes},
            "recipe": recipe,
            "gate": gate,
        }
        atomic.write_json(staging / META, exported)
        atomic.replace_dir(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return exported


def read_export(source: Path) -> dict[str, Any]:
    """The metadata of an exported adapter directory, after checking it is one."""
    source = Path(source)
    if not source.is_dir():
        raise UserError(f"{source} is not a directory")
    for name in (META, CONFIG, WEIGHTS):
        if not (source / name).is_file():
            raise UserError(f"{source} is not an exported adapter: {name} is missing")
    try:
        meta = json.loads((source / META).read_text())
    except ValueError as exc:
        raise UserError(f"{source / META} is not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or not isinstance(meta.get("files"), dict):
        raise UserError(f"{source / META} is not the metadata of `cobalt adapters export` (format {FORMAT})")
    for key in ("base_model", "weights_sha256", "base_model_sha256"):
        if not meta.get(key):
            raise UserError(f"{source / META} lacks {key}")
    return meta


def verify_files(source: Path, meta: dict[str, Any]) -> None:
    """Every file the metadata lists has its sha256 (the weights first); UserError otherwise."""
    files: dict[str, str] = meta["files"]
    if files.get(WEIGHTS) != meta["weights_sha256"]:
        raise UserError(f"{source / META} names two different sha256 for {WEIGHTS}")
    if CONFIG not in files:  # its rank and scale change what the weights do
        raise UserError(f"{source / META} records no sha256 for {CONFIG}")
    for name, expected in sorted(files.items(), key=lambda kv: kv[0] != WEIGHTS):
        path = Path(source) / name
        if ".." in Path(name).parts or not path.is_file():
            raise UserError(f"{source} is incomplete: {name} is missing")
        if file_sha256(path) != expected:
            raise UserError(f"{path} does not match the sha256 its metadata records: it was changed or damaged")


def verify_base(meta: dict[str, Any], paths: PathsSettings) -> None:
    """The base model the adapter was trained on is the one prepared here."""
    name = str(meta["base_model"])
    if not models.is_prepared(name, paths) and not Path(name).expanduser().is_dir():
        how = f"`cobalt models prepare {name}`" if name in models.catalog() else "`cobalt models import`"
        raise UserError(f"the adapter was trained on the base model {name}, which is not prepared here: run {how}")
    local = base_fingerprint(name, paths)
    if local["sha256"] != meta["base_model_sha256"]:
        raise UserError(
            f"the adapter was trained on a base model {name} with sha256 {str(meta['base_model_sha256'])[:16]}..., "
            f"but the {name} prepared here has {local['sha256'][:16]}...: prepare that model instead"
        )


@dataclass
class Imported:
    item: AdapterVersion
    new: bool


def import_adapter(
    registry: Registry, source: Path, paths: PathsSettings, origin: str = "import", **extra: Any
) -> Imported:
    """Verify the exported adapter in `source` and register it as a new version (or return the
    version that already holds the same weights)."""
    meta = read_export(source)
    existing = registry.with_weights(str(meta["weights_sha256"]))
    if existing is not None and existing.base_model == meta["base_model"]:
        return Imported(existing, False)
    verify_files(source, meta)
    verify_base(meta, paths)
    full = {**meta, "imported_from": str(Path(source).resolve()), "origin": origin, **extra}
    with tempfile.TemporaryDirectory(prefix="cobalt-import-") as staging:
        listed = Path(staging) / "adapter"  # only what was checked: an unlisted file (a `merged/`) stays out
        for name in [*meta["files"], META]:
            (listed / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(source) / name, listed / name)
        item, new = registry.register_once(listed, full)
    return Imported(item, new)


def describe_import(result: Imported) -> str:
    item = result.item
    if not result.new:
        return f"these weights are already registered as v{item.version} ({item.name}); nothing imported"
    return f"imported as v{item.version} ({served_name(item.base_model, item.version)})"
