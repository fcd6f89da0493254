"""Training as two processes: `cobalt train` with `launcher.num_processes: 2` re-runs itself
under `accelerate launch` on CPU (gloo), each rank with its own reward sandbox, and rank 0
alone writes the metrics, the adapter and exactly one registry entry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from assistant.settings_loader import load_settings
from tests.trainer.trainer_fakes import RIGHT_SUM, WRONG_SUM, sum_problem
from tests.trainer.training.tiny_grpo import one_session_dataset
from trainer.release.registry import Registry
from trainer.train_settings import LauncherSettings, load_train_settings
from trainer.training import launcher
from trainer.training.grpo import ADAPTER_META

ROOT = Path(__file__).resolve().parents[3]


def test_launch_command_on_cpu_uses_torchrun_ranks_with_gloo() -> None:
    argv, env = launcher.command(
        LauncherSettings(
            num_processes=3, cpu=True, main_process_port=29511, args=["--num_cpu_threads_per_process", "1"]
        ),
        ["assistant.cli", "train", "--dataset", "d"],
    )
    assert argv[0].endswith("accelerate") and argv[1] == "launch"
    # `--cpu` would make accelerate start one process; --multi_gpu is its torchrun launcher
    assert "--cpu" not in argv and "--multi_gpu" in argv
    assert argv[argv.index("--num_processes") + 1] == "3" and argv[argv.index("--main_process_port") + 1] == "29511"
    assert argv[argv.index("-m") - 2 : argv.index("-m")] == ["--num_cpu_threads_per_process", "1"]
    assert argv[argv.index("-m") :] == ["-m", "assistant.cli", "train", "--dataset", "d"]
    assert env["ACCELERATE_USE_CPU"] == "true"
    assert not launcher.wants_launch(LauncherSettings(num_processes=1))


@pytest.mark.docker
@pytest.mark.slow
def test_train_as_two_cpu_ranks_registers_one_adapter(tmp_path: Path, cobalt_home: Path) -> None:
    cfg = load_settings()
    settings = load_train_settings(cfg.train, "test")
    one_session_dataset(tmp_path / "ds", cfg, settings, sum_problem(), WRONG_SUM, RIGHT_SUM)
    config = tmp_path / "two-ranks.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "sandbox": {"pool_size": 1, "concurrency": 1},
                "train": {
                    "launcher": {"num_processes": 2, "cpu": True},
                    "grpo": {
                        "max_completion_length": 16,
                        "num_generations": 2,
                        "per_device_train_batch_size": 2,
                        "save_steps": 100,
                    },
                },
            }
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "assistant.cli",
            "--config",
            str(config),
            "train",
            "--dataset",
            str(tmp_path / "ds"),
            "--out",
            str(tmp_path / "run"),
            "--model",
            "tiny",
            "--profile",
            "test",
            "--max-steps",
            "2",
            "--register",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "accelerate launch --multi_gpu --num_processes 2" in proc.stderr

    printed = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(printed) == 1  # rank 0 alone prints
    summary = json.loads(printed[0])
    versions = Registry(cobalt_home / "adapters").versions("tiny")
    assert [v.version for v in versions] == [1] and summary["registered"]["version"] == 1
    meta = json.loads((versions[0].path / ADAPTER_META).read_text())
    assert meta["distributed"] == {"processes": 2, "backend": "gloo"}
    assert meta["metrics"]["steps"] == 2 and meta["metrics"]["sandbox"]["faults_dropped"] == 0
    assert meta["metrics"]["sandbox"]["completions"] > 0  # rank 0 rewarded its own completions
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [1, 2]  # one writer: no step twice
