"""configs/train.yaml: every profile resolves, its `grpo:` keys are GRPOConfig fields and
build a config, its `lora:` keys build a LoraConfig; overrides and bad keys behave. The
`gpu` profile is config-checked here (bf16 switched off: this machine has no GPU); it is
not run."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.config_files import read_yaml
from assistant.errors import UserError
from assistant.settings_loader import load_settings
from trainer.train_settings import SECTIONS, TRAIN_CONFIG, TrainSettings, load_train_settings
from trainer.training import grpo
from trainer.training.grpo import grpo_config, lora_config


@pytest.mark.parametrize("profile", ["cpu-small", "gpu", "test"])
def test_profiles_build_trl_and_peft_configs(profile: str, tmp_path: Path) -> None:
    settings = load_train_settings(load_settings().train, profile)
    on_gpu = profile == "gpu"
    args = grpo_config(settings, tmp_path, bf16=False) if on_gpu else grpo_config(settings, tmp_path)
    assert args.remove_unused_columns is False and args.output_dir == str(tmp_path / "checkpoints")
    assert args.generation_batch_size % args.num_generations == 0
    assert lora_config(settings).r == settings.lora["r"]
    if on_gpu:
        assert (args.use_vllm, args.vllm_mode, args.num_generations) == (True, "colocate", 16)
    else:
        assert args.use_vllm is False


def test_overrides_and_errors(tmp_path: Path) -> None:
    section = dict(grpo={"learning_rate": 1e-4}, gate={"turns": 3})
    settings = load_train_settings(section, "cpu-small")
    assert settings.grpo["learning_rate"] == 1e-4 and settings.gate.turns == 3
    assert settings.grpo["num_generations"] == 4  # the profile still applies
    with pytest.raises(UserError, match="no training profile named 'nope'"):
        load_train_settings(section, "nope")
    section = dict(gate={"sampels": 3})
    with pytest.raises(UserError, match="unknown key\\(s\\) sampels in 'gate'"):
        load_train_settings(section, "test")
    section = dict(grpo={"learnin_rate": 3})
    with pytest.raises(UserError, match="learnin_rate"):
        grpo_config(load_train_settings(section, "test"), tmp_path)


def test_cpu_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12 item 5: constant learning rate, LoRA on every linear projection, completions
    long enough for the answer format, more than one prompt per step; the base model in bf16
    on a CPU that multiplies bf16 natively, float32 on one that does not (`cpu_bf16: auto`)."""
    settings = load_train_settings({}, "cpu-small")
    monkeypatch.setattr(grpo, "native_bf16", lambda: True)
    args = grpo_config(settings, tmp_path)
    assert args.lr_scheduler_type == "constant" and args.max_completion_length >= 512
    # the frozen base in bfloat16; without CUDA `use_cpu` is set, or transformers refuses bf16
    assert args.bf16 is True and args.use_cpu is True
    monkeypatch.setattr(grpo, "native_bf16", lambda: False)
    assert grpo_config(settings, tmp_path).bf16 is False
    forced = load_train_settings(dict(cpu_bf16="always"), "cpu-small")
    assert grpo_config(forced, tmp_path).bf16 is True
    assert args.per_device_train_batch_size * args.gradient_accumulation_steps // args.num_generations >= 2
    assert set(lora_config(settings).target_modules) == {
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    }


def test_a_bad_value_names_the_train_key() -> None:
    assert load_train_settings(dict(gate={"turns": "3"}), "test").gate.turns == 3  # as in a file
    with pytest.raises(UserError, match=r"^config key train\.gate\.turns: must be an integer, got 'x'$"):
        load_train_settings(dict(gate={"turns": "x"}), "test")


def test_class_defaults_match_the_shipped_train_yaml() -> None:
    """Each default is stated once in the code (the section classes); configs/train.yaml's base
    sections spell the same values out."""
    base = read_yaml(TRAIN_CONFIG)
    for key, cls in SECTIONS.items():
        assert cls(**base[key]) == cls(), key
    for key in ("continue_from_current", "stop_at_fence", "max_minutes", "suppress_docstrings"):
        assert TrainSettings.model_fields[key].default == base[key], key
    assert base["gate"]["bootstrap"] is None  # the gate resamples as often as eval.bootstrap says
