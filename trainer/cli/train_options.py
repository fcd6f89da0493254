"""Shared bits of the trainer commands: progress to stderr, the profile option and the
default output folder of an evaluation (the sandbox, clients and store come from
`assistant.runtime`)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.console import to_stderr as progress

if TYPE_CHECKING:
    from assistant.settings import Settings

__all__ = ["progress", "add_profile", "is_main_process", "eval_out_dir"]


def add_profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile", help="training profile from configs/train.yaml (cpu-small, gpu, test; default: auto)"
    )


def eval_out_dir(config: Settings, out: Path | None, label: str) -> Path:
    """`out` (--out) when given, else the data dir's `eval/<label>`, the label made a safe
    folder name."""
    return out or config.paths.data_dir / "eval" / (re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "model")


def is_main_process() -> bool:
    """False on the non-zero ranks of `accelerate launch` (they must not write shared state)."""
    import os

    return int(os.environ.get("RANK", "0")) == 0
