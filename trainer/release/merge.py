"""A merged checkpoint of an adapter: the LoRA folded into the base weights with PEFT's
`merge_and_unload`, saved as `<adapter dir>/merged/` (with the base's tokenizer, chat
template and generation config), so vLLM serves the promoted adapter at the base model's
speed (a hot-loaded LoRA runs at about half of it on vLLM-CPU).

The save is atomic: written to a staging directory, then renamed; an existing complete
`merged/` is reused. The registry decides when to merge (at promote time); the server
decides whether to serve it (`server.serve_merged`). This module does not serve or promote.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

MERGED = "merged"
BASE_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.json",
    "merges.txt",
    "chat_template.jinja",
    "generation_config.json",
    "tokenizer.model",
)


def merged_dir(adapter_dir: Path) -> Path | None:
    """The complete merged checkpoint of an adapter, or None."""
    path = Path(adapter_dir) / MERGED
    return path if (path / "config.json").is_file() and any(path.glob("*.safetensors")) else None


def merge_adapter(adapter_dir: Path, base_path: Path, progress: Callable[[str], None] = print) -> Path:
    """Fold the adapter in `adapter_dir` into the base checkpoint at `base_path`; returns
    `<adapter_dir>/merged`."""
    done = merged_dir(adapter_dir)
    if done is not None:
        return done
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    progress(f"merging adapter {adapter_dir.name} into {base_path.name} ...")
    base = AutoModelForCausalLM.from_pretrained(str(base_path), dtype=torch.float32)
    model = PeftModel.from_pretrained(base, str(adapter_dir)).merge_and_unload()
    staging = Path(adapter_dir) / f".{MERGED}-staging"
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(str(staging), safe_serialization=True)
    for name in BASE_FILES:
        if (Path(base_path) / name).is_file():
            shutil.copy2(Path(base_path) / name, staging / name)
    final = Path(adapter_dir) / MERGED
    shutil.rmtree(final, ignore_errors=True)  # an unfinished earlier save
    staging.rename(final)
    return final
