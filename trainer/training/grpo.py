"""LoRA GRPO on a bandit dataset: TRL `GRPOTrainer` + a PEFT `LoraConfig`, rewarded by the
sandbox (`trainer.training.reward.SandboxReward`). One generation step per prompt, G completions.

Layout of one training directory:

    checkpoints/checkpoint-<step>/   Trainer checkpoints (adapter, optimizer, RNG, state);
                                     a rerun resumes from the last complete one (one
                                     already at max_steps is saved as the adapter as it is;
                                     a saved adapter asked for more steps goes on from one)
    metrics.jsonl                    one line per logged step: reward, reward_std, loss, kl,
                                     sandbox faults, seconds (the reward curve), the step's
                                     time split (time/generate_s, time/reward_s, ...) and the
                                     groups left out for zero spread
    adapter/                         the final adapter + `cobalt-adapter.json` metadata
                                     (base model, data hash, config, metrics, parent version)

With a parent adapter (the current one), training continues from it and the KL reference
is the parent. Hyperparameters come from `configs/train.yaml` (`grpo:`, `lora:`). Under
`accelerate launch` every process trains on its slice; only the main process writes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from assistant.errors import UserError
from assistant.interfaces import BatchRunner
from assistant.messages.repetition import RepeatStop
from assistant.serving import models
from assistant.serving.token_bias import triple_quote_ban
from assistant.settings import PathsSettings
from assistant.store import atomic
from trainer.data.dataset_files import load_split, read_meta
from trainer.train_settings import TrainSettings
from trainer.training import llama_rollout, run_identity
from trainer.training.budget import time_budget
from trainer.training.cpu_bf16 import native_bf16
from trainer.training.fence_stop import stop_generation_at_fence
from trainer.training.greedy_anchor import anchor_greedy_in_generation
from trainer.training.guide_anchor import GuideTable, guide_in_generation
from trainer.training.metrics_log import MetricsLog, read_metrics
from trainer.training.reward import SandboxReward
from trainer.training.shared_prefix import share_prefill_in_generation, trainer_class

ADAPTER_META = "cobalt-adapter.json"
Progress = Callable[[str], None]


def last_checkpoint(checkpoints: Path) -> Path | None:
    """The newest complete checkpoint (its trainer_state.json is written last)."""
    if not checkpoints.is_dir():
        return None
    found = []
    for path in checkpoints.glob("checkpoint-*"):
        step = path.name.split("-")[-1]
        if step.isdigit() and (path / "trainer_state.json").is_file():
            found.append((int(step), path))
    return max(found)[1] if found else None


def grpo_config(settings: TrainSettings, out: Path, max_steps: int | None = None, **extra: Any) -> Any:
    from trl import GRPOConfig

    values = {**settings.grpo, **extra}
    if max_steps is not None:
        values["max_steps"] = max_steps
    known = {f.name for f in dataclasses.fields(GRPOConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise UserError(f"configs/train.yaml: grpo has unknown key(s) {', '.join(unknown)} (not GRPOConfig fields)")
    values.update(
        output_dir=str(out / "checkpoints"), remove_unused_columns=False, disable_tqdm=True, save_only_model=False
    )
    values.setdefault("report_to", [])
    if values.get("bf16") and not _cuda_available():
        if settings.cpu_bf16 == "auto" and not native_bf16():
            values["bf16"] = False  # a bf16 product on this CPU is a scalar loop (trainer/training/cpu_bf16.py)
        else:
            values.setdefault("use_cpu", True)  # transformers refuses bf16 without a GPU unless told to use the CPU
    return GRPOConfig(**values)


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def generation_kwargs(settings: TrainSettings, model_path: Path, given: dict[str, Any] | None) -> dict[str, Any] | None:
    """TRL's generation_kwargs with the served model's token bans added (`suppress_docstrings`)."""
    if not settings.suppress_docstrings:
        return given

    banned = set((given or {}).get("suppress_tokens") or []) | set(triple_quote_ban(str(model_path)))
    return {**(given or {}), "suppress_tokens": sorted(banned)}


def lora_config(settings: TrainSettings) -> Any:
    from peft import LoraConfig

    try:
        return LoraConfig(**settings.lora)
    except TypeError as exc:
        raise UserError(f"configs/train.yaml: lora is not a valid LoraConfig ({exc})") from None


@dataclass
class TrainResult:
    adapter: Path
    meta: dict[str, Any]
    resumed_from: str | None = None


def _cpu_seconds() -> float:
    """CPU seconds of this process (all its threads) and of its waited-for children."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _summary(
    rows: list[dict[str, Any]],
    totals: dict[str, int],
    wall_s: float,
    samples: int,
    steps_here: int,
    cpu_s: float = 0.0,
    prompts: int = 0,
    first_step: int = 0,
) -> dict[str, Any]:
    """The run's figures for the adapter's metadata. `sandbox` (the reward's counts) and the
    timings cover this process's steps only, after `first_step` (a resumed run's later part; which
    steps: `sandbox_steps`); the reward curve and `shares` (the per-step shares of tampered,
    flagged and code-less completions, averaged) cover every logged step."""
    rewards = [r["reward"] for r in rows]
    share_keys = sorted({k for r in rows for k in r if k.startswith("reward/") and k.endswith("_share")})
    split = sorted({k for r in rows for k in r if k.startswith("time/")})
    third = max(1, len(rewards) // 3)
    return {
        "steps": rows[-1]["step"] if rows else 0,
        "mean_reward": sum(rewards) / len(rewards) if rewards else None,
        "first_reward": sum(rewards[:third]) / third if rewards else None,
        "last_reward": sum(rewards[-third:]) / third if rewards else None,
        "reward_curve": [round(r, 4) for r in rewards],
        "sandbox": dict(totals),
        "sandbox_steps": [first_step + 1, rows[-1]["step"]] if rows else None,
        "shares": {
            k.removeprefix("reward/").removesuffix("_share"): round(
                sum(float(r.get(k, 0.0)) for r in rows) / len(rows), 4
            )
            for k in share_keys
        },
        "wall_s": round(wall_s, 1),
        "seconds_per_sample": round(wall_s / samples, 3) if samples else None,
        "seconds_per_step": round(wall_s / steps_here, 1) if steps_here else None,
        "cpu_s": round(cpu_s, 1),
        "prompts": prompts,
        # seconds of each part of the steps, summed (trainer.training.shared_prefix timers)
        "time_split": {k.removeprefix("time/"): round(sum(r.get(k, 0.0) for r in rows), 2) for k in split},
        "zero_spread_groups_dropped": sum(int(r.get("zero_spread/groups_dropped", 0)) for r in rows),
    }


def load_policy(model_path: Path, parent: Path | None, bf16: bool) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(model_path), dtype=torch.bfloat16 if bf16 else torch.float32)
    if parent is None:
        return model
    from peft import PeftModel

    return PeftModel.from_pretrained(model, str(parent), is_trainable=True)


def make_trainer(
    model_path: Path,
    settings: TrainSettings,
    args: Any,
    train_set: Any,
    reward_funcs: list[Any],
    parent: Any = None,
    rollout_func: Any = None,
    llama: dict[str, Any] | None = None,
) -> Any:
    """A GRPOTrainer on the policy (a new LoRA, or the parent adapter made trainable), with
    the transformers log printer removed (stdout stays clean for --json), the shared-prefix
    paths switched as `settings.shared_prefix` says and the step timers on. With
    `rollouts.engine: llama.cpp`, `llama` holds `paths`, `server` and `work` for its server."""
    from transformers import AutoTokenizer, PrinterCallback

    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    policy = load_policy(model_path, Path(parent.path) if parent is not None else None, bool(args.bf16))
    trainer = trainer_class()(
        model=policy,
        reward_funcs=reward_funcs,
        args=args,
        train_dataset=train_set,
        processing_class=tokenizer,
        rollout_func=rollout_func,
        peft_config=None if parent is not None else lora_config(settings),
    )
    trainer.remove_callback(PrinterCallback)
    trainer.shared = settings.shared_prefix
    repeat = RepeatStop(settings.reward.repeat_block_chars, settings.reward.repeat_times)
    guides = GuideTable(tokenizer, train_set, int(args.max_completion_length or 0)) if settings.guide_anchor else None
    if llama_rollout.wanted(settings.rollouts.engine, model_path, (llama or {}).get("paths"), args.use_vllm):
        llama_rollout.install(trainer, tokenizer, settings, model_path, guides, repeat, **(llama or {}))
        return trainer
    if settings.shared_prefix.generation:
        share_prefill_in_generation(trainer.model)  # before the fence stop, which wraps it
    if settings.greedy_anchor:
        if args.use_vllm:
            raise UserError("greedy_anchor needs transformers generation: set grpo.use_vllm or greedy_anchor false")
        anchor_greedy_in_generation(trainer.model)  # before the fence stop, which wraps it
    if settings.guide_anchor:
        if args.use_vllm:
            raise UserError("guide_anchor needs transformers generation: set grpo.use_vllm or guide_anchor false")
        guide_in_generation(trainer.model, guides)
    if settings.stop_at_fence:
        stop_generation_at_fence(trainer.model, tokenizer, repeat)
    return trainer


def train(
    settings: TrainSettings,
    *,
    model: str,
    dataset: Path,
    out: Path,
    paths: PathsSettings,
    sandbox: BatchRunner,
    parent: Any = None,
    max_steps: int | None = None,
    progress: Progress = print,
    extra_callbacks: list[Any] | None = None,
    server: Any = None,
    sanitize: bool = True,
    **grpo_overrides: Any,
) -> TrainResult:
    """Train (or resume) into `out`; returns the saved adapter and its metadata. `parent` is
    an `AdapterVersion` to continue from; `sanitize` is `loop.sanitize_answers` (the reward grades
    as the sessions did). An `out/adapter` already saved is returned as is, unless `max_steps` asks
    for more steps than it took: then the run goes on from its newest checkpoint. A
    directory of another model, dataset or parent is refused (`run_identity`)."""

    data_meta = read_meta(dataset)
    args = grpo_config(settings, out, max_steps, **grpo_overrides)
    recipe = run_identity.recipe_hash(settings, grpo_overrides, sanitize)
    ident = run_identity.identity(model, data_meta, parent, int(args.seed), recipe)
    run_identity.claim(out, ident)
    final, resume = out / "adapter", last_checkpoint(out / "checkpoints")
    if (final / ADAPTER_META).is_file():
        saved = json.loads((final / ADAPTER_META).read_text())
        reached = int((saved.get("metrics") or {}).get("steps") or 0)
        if not max_steps or max_steps <= reached:
            return TrainResult(final, saved)
        if resume is None:
            raise UserError(
                f"{out} holds an adapter of {reached} steps and no checkpoint to go on to step {max_steps} from: "
                "train into another --out"
            )
        progress(f"the adapter in {out} stopped at step {reached}: going on to step {max_steps}")
    model_path = models.resolve(model, paths)
    train_set = load_split(dataset, "train")
    if len(train_set) == 0:
        raise UserError(f"the dataset {dataset} has no training prompts")
    if {**settings.grpo, **grpo_overrides}.get("bf16") and not args.bf16:
        progress("this CPU has no native bfloat16 (AMX, AVX512-BF16): training in float32 (train.cpu_bf16)")
    args.generation_kwargs = generation_kwargs(settings, model_path, args.generation_kwargs)
    reward = SandboxReward(
        sandbox,
        settings.reward,
        max_completion_length=int(args.max_completion_length or 0),
        anchored=settings.greedy_anchor,
        sanitize=sanitize,
    )
    rank = int(os.environ.get("RANK", "0"))  # under `accelerate launch`: each rank its own llama-server and files
    work = out / "rollouts" if rank == 0 else out / f"rollouts-rank{rank}"
    llama = {"paths": paths, "server": server, "work": work, "progress": progress}
    trainer = make_trainer(model_path, settings, args, train_set, [reward], parent, llama=llama)
    is_main = trainer.accelerator.is_main_process
    log = MetricsLog(out / "metrics.jsonl", reward, progress, is_main)
    trainer.add_callback(log.callback)
    budget = time_budget(settings.max_minutes, progress)
    for callback in [*(extra_callbacks or []), *([budget] if budget else [])]:
        trainer.add_callback(callback)
    first_step = int(resume.name.split("-")[-1]) if resume else 0
    started, cpu_started, rollouts = time.monotonic(), _cpu_seconds(), None
    if resume is not None and 0 < args.max_steps <= first_step:
        # transformers would take one more step before it checks max_steps: a run stopped at a
        # checkpoint is finished at it instead (its weights, then saved as the adapter below)
        progress(f"{resume.name} already reached max_steps {args.max_steps}: saving its adapter, no further step")
        trainer._load_from_checkpoint(str(resume))
        trainer.state.global_step = first_step
    else:
        if resume is not None:
            progress(f"resuming training from {resume.name}")
        try:
            trainer.train(resume_from_checkpoint=str(resume) if resume else None)
        finally:
            rollouts = llama_rollout.close(trainer.model)  # its server's CPU time joins `cpu` below
    wall, cpu = time.monotonic() - started, _cpu_seconds() - cpu_started
    rows = [r for r in (read_metrics(out) if is_main else log.rows) if r.get("step", 0) <= trainer.state.global_step]
    steps_here = trainer.state.global_step - first_step
    samples = (
        steps_here
        * args.per_device_train_batch_size
        * args.gradient_accumulation_steps
        * trainer.accelerator.num_processes
    )
    meta = {
        "base_model": model,
        "base_model_path": str(model_path),
        "data_hash": data_meta["data_hash"],
        "dataset": str(Path(dataset).resolve()),  # `adapters export` copies it from there
        "dataset_counts": data_meta.get("counts"),
        "dataset_mix": data_meta.get("mix"),  # training prompts per part (own, synthetic), trainer.data.mix
        "parent_version": getattr(parent, "version", None),
        "parent_name": getattr(parent, "name", None),
        "config": {
            "profile": settings.profile,
            "grpo": {**settings.grpo, **grpo_overrides},
            "lora": (settings.lora if parent is None else (parent.meta.get("config") or {}).get("lora")),
            "reward": settings.reward.model_dump(),
            "max_steps": args.max_steps,
            "max_minutes": settings.max_minutes,
            "greedy_anchor": settings.greedy_anchor,
            "guide_anchor": settings.guide_anchor,
        },
        "guides": dict(getattr(getattr(trainer.model, "_cobalt_guides", None), "counts", {})),
        "rollouts": {"engine": "llama.cpp", **rollouts} if rollouts else {"engine": "transformers"},
        "base_dtype": str(trainer.model.get_input_embeddings().weight.dtype).removeprefix("torch."),
        "stopped_by_budget_at": getattr(budget, "stopped_at", None),
        "metrics": _summary(
            rows,
            reward.totals,
            wall,
            samples,
            steps_here,
            cpu,
            samples // max(1, int(args.num_generations)),
            first_step,
        ),
        "resumed_from": resume.name if resume else None,
        "created_at": time.time(),
        "versions": _versions(),
        "distributed": {
            "processes": trainer.accelerator.num_processes,
            "backend": getattr(trainer.accelerator.state, "backend", None),
        },
    }
    if is_main:
        staging = out / ".adapter-staging"
        shutil.rmtree(staging, ignore_errors=True)
        model_to_save = trainer.model
        names = list(getattr(model_to_save, "peft_config", {}) or {})
        model_to_save.save_pretrained(str(staging), selected_adapters=["default"] if "ref" in names else None)
        (staging / ADAPTER_META).write_text(json.dumps(meta, indent=2, sort_keys=True, default=str))
        atomic.replace_dir(staging, final)  # over an unfinished earlier save
    return TrainResult(final, meta, resume.name if resume else None)


def _versions() -> dict[str, str]:
    import peft
    import torch
    import transformers
    import trl

    return {
        "trl": trl.__version__,
        "peft": peft.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
    }
