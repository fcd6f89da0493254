"""Training as several processes: `cobalt train` (and the nightly training step) re-run under
`accelerate launch` when `launcher.num_processes` in configs/train.yaml is above 1.

GPUs: `accelerate launch --multi_gpu --num_processes N` (torchrun, one GPU per rank, NCCL).
CPU: the same torchrun launcher with ACCELERATE_USE_CPU=true, so every rank's Accelerator is
MULTI_CPU with the gloo backend; `accelerate launch --cpu --num_processes N` alone would
start a single process (it uses accelerate's simple launcher unless an mpirun hostfile is
configured; accelerate issue #2741). Every rank opens its own reward sandbox; only rank 0
writes the adapter, the metrics and the registry (trainer/training/grpo.py, trainer/cli/train_cmd.py).
Not here: what a rank does (trainer/training/grpo.py) or multi-node launches (pass them in `args`).
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from trainer.train_settings import LauncherSettings


def launched() -> bool:
    """True inside a rank started by a launcher (torchrun sets WORLD_SIZE and LOCAL_RANK)."""
    return "LOCAL_RANK" in os.environ or int(os.environ.get("WORLD_SIZE", "1")) > 1


def wants_launch(settings: LauncherSettings) -> bool:
    """True when training should re-run as `num_processes` ranks (and this is not one yet)."""
    return int(settings.num_processes) > 1 and not launched()


def on_cpu(settings: LauncherSettings) -> bool:
    if settings.cpu != "auto":
        return bool(settings.cpu)
    import torch

    return not torch.cuda.is_available()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def command(settings: LauncherSettings, module_args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The `accelerate launch` argv running `python -m <module_args>` as the ranks, and its env."""
    accelerate = str(Path(sys.executable).with_name("accelerate"))
    port = int(settings.main_process_port) or _free_port()
    argv = [
        accelerate,
        "launch",
        "--multi_gpu",
        "--num_processes",
        str(int(settings.num_processes)),
        "--num_machines",
        "1",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(port),
        *[str(a) for a in settings.args],
        "-m",
        *module_args,
    ]
    env = dict(os.environ)
    if on_cpu(settings):
        env["ACCELERATE_USE_CPU"] = "true"  # every rank: MULTI_CPU, gloo
    return argv, env


def train_args(
    *,
    dataset: Path,
    out: Path,
    model: str,
    profile: str,
    parent: Any = None,
    max_steps: int | None = None,
    seed: int | None = None,
    no_budget: bool = False,
    register: bool = False,
    as_json: bool = False,
    config: str | None = None,
) -> list[str]:
    """`assistant.cli ... train ...` for the ranks (every rank gets the same, explicit values)."""
    argv = [
        "assistant.cli",
        *(["--config", str(config)] if config else []),
        "train",
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--model",
        model,
        "--profile",
        profile,
    ]
    if parent is not None:
        argv += ["--parent", str(parent)]
    if max_steps is not None:
        argv += ["--max-steps", str(max_steps)]
    if seed is not None:
        argv += ["--seed", str(seed)]
    if no_budget:
        argv += ["--no-budget"]
    return argv + (["--register"] if register else []) + (["--json"] if as_json else [])


def run(settings: LauncherSettings, module_args: list[str], progress: Callable[[str], None] = print) -> int:
    """Run the ranks and wait; their exit status (non-zero if any rank failed)."""
    argv, env = command(settings, module_args)
    progress("training: " + shlex.join(argv))
    return subprocess.call(argv, env=env)
