"""A run stopped at a checkpoint that already reached `max_steps` (stopped early by hand, then
rerun with `--max-steps` of that checkpoint) is finished at it: no further step (transformers would
take one before checking), and the adapter saved is the checkpoint's weights, with its steps; the
directory is refused to a run of another dataset."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from assistant.errors import UserError
from tests.trainer.training.tiny_grpo import sum_run, train_tiny


@pytest.mark.docker
def test_a_run_at_its_last_checkpoint_is_saved_without_another_step(tmp_path: Path, sandbox, home_config) -> None:
    cfg = home_config
    settings, dataset = sum_run(cfg, tmp_path / "ds")
    run = tmp_path / "run"
    first = train_tiny(settings, cfg, sandbox, dataset, run, max_steps=2)
    shutil.rmtree(first.adapter)  # as if the run had been stopped right after checkpoint-2
    checkpoint = run / "checkpoints" / "checkpoint-2"
    # mark the checkpoint's weights, so that only loading them can give the saved adapter
    weights = load_file(checkpoint / "adapter_model.safetensors")
    weights = {k: v + 0.5 if "lora_B" in k else v for k, v in weights.items()}
    save_file(weights, str(checkpoint / "adapter_model.safetensors"))
    said: list[str] = []

    again = train_tiny(settings, cfg, sandbox, dataset, run, max_steps=2, progress=said.append)

    assert any("checkpoint-2 already reached max_steps 2" in line for line in said), said
    assert not (run / "checkpoints" / "checkpoint-3").exists()
    assert again.meta["resumed_from"] == "checkpoint-2" and again.meta["metrics"]["steps"] == 2
    saved, kept = (
        load_file(again.adapter / "adapter_model.safetensors"),
        load_file(checkpoint / "adapter_model.safetensors"),
    )
    assert saved.keys() == kept.keys() and all(torch.equal(saved[k], kept[k]) for k in kept)
    # the same directory is never continued, nor its adapter returned, for another dataset
    other = tmp_path / "other-ds"
    shutil.copytree(dataset, other)
    meta = json.loads((other / "meta.json").read_text())
    (other / "meta.json").write_text(json.dumps({**meta, "data_hash": "another"}))
    with pytest.raises(UserError, match="holds a training run of another setup .data_hash"):
        train_tiny(settings, cfg, sandbox, other, run, max_steps=2)


@pytest.mark.docker
def test_a_finished_run_asked_for_more_steps_goes_on_from_its_checkpoint(tmp_path: Path, sandbox, home_config) -> None:
    """Its saved adapter is returned as is for as many steps or fewer; for more, the run resumes from
    its newest checkpoint and saves the longer adapter over it (not the old one back, as before)."""
    cfg = home_config
    settings, dataset = sum_run(cfg, tmp_path / "ds")
    run = tmp_path / "run"
    first = train_tiny(settings, cfg, sandbox, dataset, run, max_steps=2)
    said: list[str] = []

    same = train_tiny(settings, cfg, sandbox, dataset, run, max_steps=2, progress=said.append)
    assert same.meta == first.meta and said == []  # returned as it was: nothing loaded, no step
    longer = train_tiny(settings, cfg, sandbox, dataset, run, max_steps=3, progress=said.append)

    assert any("stopped at step 2: going on to step 3" in line for line in said), said
    assert longer.meta["resumed_from"] == "checkpoint-2" and longer.meta["metrics"]["steps"] == 3
    assert (run / "checkpoints" / "checkpoint-3").is_dir()  # step 3 ran (its loss may be 0: no spread)
    assert json.loads((longer.adapter / "cobalt-adapter.json").read_text())["metrics"]["steps"] == 3
    shutil.rmtree(run / "checkpoints")
    with pytest.raises(UserError, match="no checkpoint to go on to step 4"):
        train_tiny(settings, cfg, sandbox, dataset, run, max_steps=4)
