"""A PEFT LoRA adapter as a GGUF LoRA file that llama.cpp applies on the quantized base.

The conversion is llama.cpp's own `convert_lora_to_gguf.py` from the source tree kept beside
the build (`assistant.serving.llama_build`), run with that tree's `gguf-py`, given the base's
checkpoint directory for its config. The result is cached per adapter content under
`<cache>/llama-loras/<digest>/<served name>.gguf` (the file's stem is the name requests choose
it by), written to a temporary name and renamed, so a crash leaves no half file behind.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from assistant.errors import UserError
from assistant.serving import llama_build

WEIGHT_FILES = ("adapter_model.safetensors", "adapter_model.bin")


class LoraConversionError(UserError):
    """A PEFT adapter could not be converted to a GGUF LoRA; the message says why."""


def _digest(adapter_dir: Path, base_dir: Path) -> str:
    sha = hashlib.sha256(str(base_dir.resolve()).encode())
    for name in ("adapter_config.json", *WEIGHT_FILES):
        path = adapter_dir / name
        if path.is_file():
            with open(path, "rb") as f:
                while chunk := f.read(1 << 22):
                    sha.update(chunk)
    return sha.hexdigest()[:16]


def gguf_lora(
    adapter_dir: Path, base_dir: Path, name: str, cache_dir: Path, dtype: str = "f32", out_dir: Path | None = None
) -> Path:
    """The GGUF LoRA file of the PEFT adapter in `adapter_dir` (converted once), served as `name`;
    under `out_dir/<digest>/` instead of the cache when given (e.g. a training run's own weights)."""
    adapter_dir = Path(adapter_dir)
    if not (adapter_dir / "adapter_config.json").is_file() or not any(
        (adapter_dir / w).is_file() for w in WEIGHT_FILES
    ):
        raise LoraConversionError(f"{adapter_dir} is not a PEFT LoRA adapter (no adapter_config.json and weights)")
    out = (out_dir or cache_dir / "llama-loras") / _digest(adapter_dir, base_dir) / f"{name}.gguf"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tree = llama_build.source_tree(cache_dir)
    partial = out.with_name(f".{name}.partial-{os.getpid()}.gguf")
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(tree / "gguf-py"), str(tree), os.environ.get("PYTHONPATH", "")]),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    argv = [
        sys.executable,
        str(tree / "convert_lora_to_gguf.py"),
        "--base",
        str(base_dir),
        "--outfile",
        str(partial),
        "--outtype",
        dtype,
        str(adapter_dir),
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    if proc.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        lines = [ln for ln in (proc.stderr or proc.stdout).strip().splitlines() if ln.strip()]
        raise LoraConversionError(
            f"llama.cpp's convert_lora_to_gguf.py could not convert {adapter_dir}: {(lines or ['no output'])[-1][:300]}"
        )
    partial.rename(out)
    return out
