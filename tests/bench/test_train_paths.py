"""`cobalt bench train --paths standard,shared,shared-bf16` on the tiny model: the same bandit dataset
trained with TRL's standard step and with the shared-prefix step, each reporting prompts per
hour and per CPU-hour, the time split of its steps, and their ratio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.cli import main
from tests.bench.test_train import stored_tasks
from trainer.training.cpu_bf16 import native_bf16

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_bench_train_compares_the_standard_and_the_shared_step(
    cobalt_home: Path, tmp_path: Path, sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = stored_tasks(tmp_path, sandbox)
    capsys.readouterr()
    args = ["bench", "train", "--model", "tiny", "--tasks", str(tasks), "--split", "all", "--limit", "2"]
    args += ["--steps", "2", "--generations", "2", "--prompts-per-step", "2", "--max-completion-length", "12"]
    code = main([*args, "--profile", "test", "--paths", "standard,shared,shared-bf16", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    report = json.loads(out.out)
    assert "cobalt" not in report and "baseline" not in report  # --paths replaces the bandit/baseline comparison
    paths = report["paths"]
    for name in ("standard", "shared", "shared-bf16"):
        side = paths[name]
        # bf16 only where the CPU multiplies it natively (train.cpu_bf16: auto), else float32
        bf16 = name == "shared-bf16" and native_bf16()
        assert side["base_dtype"] == ("bfloat16" if bf16 else "float32")
        assert side["prompts_trained"] == 2 * 2 and len(side["reward_curve"]) == 2
        assert side["wall_s"] > 0 and side["cpu_s"] > 0
        assert side["prompts_per_cpu_hour"] == pytest.approx(4 * 3600 / side["cpu_s"], rel=1e-2)
        split = side["time_split"]
        assert {"generate_s", "reward_s", "loss_forward_s", "loss_backward_s", "step_s"} <= set(split)
        assert split["generate_s"] > 0 and split["step_s"] >= split["generate_s"]
    ratio = paths["shared"]["prompts_per_cpu_hour"] / paths["standard"]["prompts_per_cpu_hour"]
    assert paths["ratio_prompts_per_cpu_hour"] == pytest.approx(ratio, rel=1e-2)
    ratio = paths["shared-bf16"]["prompts_per_cpu_hour"] / paths["standard"]["prompts_per_cpu_hour"]
    assert paths["ratio_prompts_per_cpu_hour_shared_bf16"] == pytest.approx(ratio, rel=1e-2)

    capsys.readouterr()
    assert main([*args, "--steps", "1", "--profile", "test", "--paths", "shared"]) == 0
    table = capsys.readouterr().out
    assert "prompts/CPU-h" in table and table.splitlines()[1].startswith("shared")
