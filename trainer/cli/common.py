"""Shared bits of the trainer commands: progress to stderr and the profile option (the
sandbox, clients and store come from `assistant.runtime`)."""

from __future__ import annotations

import argparse

from assistant.runtime import to_stderr as progress

__all__ = ["progress", "add_profile", "is_main_process"]


def add_profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", help="training profile from configs/train.yaml "
                                          "(cpu-small, gpu, test; default: auto)")


def is_main_process() -> bool:
    """False on the non-zero ranks of `accelerate launch` (they must not write shared state)."""
    import os

    return int(os.environ.get("RANK", "0")) == 0
