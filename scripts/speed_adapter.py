"""A LoRA adapter registered and promoted (so its merged checkpoint is made) in the registry
of the current COBALT_HOME, a scratch one:

- by default one of a training profile's shape (rank, target projections) with random
  weights: the input of `cobalt bench serve --adapter vN` before any real adapter exists
  (serving speed depends on the adapter's shape, not on its values);
- with `--from DIR`, a trained adapter (a `cobalt train` output's `adapter/`), so that
  `cobalt eval` in that home measures it merged, at the base model's speed, as the product
  serves a promoted adapter, without promoting it where users are served.

Never promote a random adapter in a registry that serves users.

    COBALT_HOME=/tmp/speed COBALT__PATHS__CACHE_DIR=~/.cache/cobalt \
        .venv/bin/python scripts/speed_adapter.py --model qwen-coder --profile cpu-small
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen-coder")
    parser.add_argument(
        "--profile", default="cpu-small", help="the configs/train.yaml profile whose lora: shape to use"
    )
    parser.add_argument("--from", dest="source", type=Path, help="a trained adapter directory to register instead")
    args = parser.parse_args()
    if args.source is not None:
        promote_trained(args.source)
        return

    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    from assistant.serving import models
    from assistant.settings_loader import load_settings
    from trainer.release.registry import Registry, merge_into_base
    from trainer.train_settings import load_train_settings
    from trainer.training.grpo import lora_config

    settings = load_settings()
    train = load_train_settings(settings.train, args.profile)
    config = lora_config(train)
    config.init_lora_weights = False  # random A and B: a non-zero delta, as a trained adapter has
    torch.manual_seed(0)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(models.resolve(args.model, settings.paths)), config)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        registry = Registry.open(settings.paths)
        item = registry.register(
            Path(tmp), {"base_model": args.model, "speed_stand_in": True, "profile": train.profile}
        )
    registry.promote(item.version, "speed stand-in (random weights)", merge=merge_into_base(settings))
    print(f"registered and promoted {item.name} of {args.model} ({train.profile} shape) in {settings.paths.data_dir}")


def promote_trained(source: Path) -> None:
    import json

    from assistant.settings_loader import load_settings
    from trainer.release.registry import Registry, merge_into_base
    from trainer.training.grpo import ADAPTER_META

    meta_path = source / ADAPTER_META
    if not meta_path.is_file():
        raise SystemExit(f"{source} is not a trained adapter directory (no {ADAPTER_META})")
    settings = load_settings()
    registry = Registry.open(settings.paths)
    item = registry.register(source, json.loads(meta_path.read_text()))
    registry.promote(item.version, f"measuring {source} merged", merge=merge_into_base(settings))
    print(f"registered and promoted {item.name} (from {source}) in {settings.paths.data_dir}")


if __name__ == "__main__":
    main()
