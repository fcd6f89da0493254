"""A small GRPO run on the tiny model for the training tests: the `test` profile biased
towards chosen programs, a dataset of one session, and the training call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assistant.problems.schema import Problem
from assistant.serving import models
from tests.trainer.trainer_fakes import RIGHT_SUM, WRONG_SUM, code_bias, session, sum_problem
from trainer.data.build import build
from trainer.train_settings import TrainSettings, load_train_settings
from trainer.training import grpo
from trainer.training.shared_prefix import trainer_class


def biased_settings(cfg: Any, programs: list[str], completion_length: int, generations: int) -> TrainSettings:
    """The `test` training profile, its tiny model biased towards writing `programs` (see
    `code_bias`), `generations` completions per prompt in one batch."""
    settings = load_train_settings(cfg.train, "test")
    settings.grpo.update(
        max_completion_length=completion_length,
        num_generations=generations,
        per_device_train_batch_size=generations,
        generation_kwargs={"sequence_bias": code_bias(models.resolve("tiny", cfg.paths), programs)},
    )
    return settings


def one_session_dataset(out: Path, cfg: Any, settings: TrainSettings, problem: Problem, wrong: str, right: str) -> Path:
    """A training dataset built into `out` from one session: `wrong` fails turn 1, `right` passes turn 2."""
    sessions = [session(problem, [0.0, 1.0], "s1", programs=[wrong, right])]
    build(sessions, out, settings, tokenizer=None, sandbox=None, loop=cfg.loop, perturb=False)
    return out


def train_tiny(
    settings: TrainSettings, cfg: Any, sandbox: Any, dataset: Path, out: Path, max_steps: int, progress: Any = None
) -> grpo.TrainResult:
    """GRPO on the tiny model for `max_steps` steps, rewarded by `sandbox` (progress lines go
    to `progress`, or nowhere)."""
    return grpo.train(
        settings,
        model="tiny",
        dataset=dataset,
        out=out,
        paths=cfg.paths,
        sandbox=sandbox,
        max_steps=max_steps,
        progress=progress or (lambda _: None),
    )


def _length_reward(completions: list[Any], **_: Any) -> list[float]:
    return [float(len(c)) for c in completions]


def tiny_trainer(test_config: Any, out: Path, **grpo: Any) -> Any:
    """A GRPOTrainer (the shared-prefix class, paths off) on the tiny model with a fresh LoRA,
    rewarded by completion length, in training mode: for tests that call its parts directly."""
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    if not models.is_prepared("tiny", test_config.paths):
        models.prepare("tiny", test_config.paths)
    path = models.resolve("tiny", test_config.paths)
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(str(path))
    tok.pad_token = tok.pad_token or tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32)
    values = dict(
        output_dir=str(out),
        per_device_train_batch_size=6,
        num_generations=3,
        max_completion_length=8,
        report_to=[],
        beta=0.0,
        loss_type="dapo",
        disable_tqdm=True,
        bf16=False,
    )
    values.update(grpo)
    lora = LoraConfig(
        r=4,
        lora_alpha=8,
        lora_dropout=0.0,
        target_modules=["q_proj", "v_proj"],
        init_lora_weights=False,
        task_type="CAUSAL_LM",
    )
    trainer = trainer_class()(
        model=model,
        reward_funcs=[_length_reward],
        args=GRPOConfig(**values),
        train_dataset=Dataset.from_list([{"prompt": "a b c"}, {"prompt": "d e"}]),
        processing_class=tok,
        peft_config=lora,
    )
    trainer.model.train()  # gradient checkpointing on (TRL's default); no dropout anywhere (rates 0)
    trainer.current_gradient_accumulation_steps = 1  # set by Trainer.train
    if trainer.args.gradient_checkpointing:  # as Trainer.train does
        trainer.model.gradient_checkpointing_enable(
            gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs
        )
    return trainer


def sum_run(cfg: Any, out: Path) -> tuple[TrainSettings, Path]:
    """The tiny model (prepared if needed), biased towards the right and the wrong sum, and a
    dataset in `out` of one session on the sum problem: the settings and the dataset."""
    if not models.is_prepared("tiny", cfg.paths):
        models.prepare("tiny", cfg.paths)
    settings = biased_settings(cfg, [RIGHT_SUM, WRONG_SUM], completion_length=32, generations=2)
    return settings, one_session_dataset(out, cfg, settings, sum_problem(), WRONG_SUM, RIGHT_SUM)
