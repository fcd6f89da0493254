"""The trainer's settings: `configs/train.yaml`, then the chosen profile (`cpu-small`, `gpu`,
`test`, or one a user adds under `train.profiles`), then the `train:` section of the loaded
settings (a mapping from `--config FILE` and `COBALT__TRAIN__...` variables), which overrides
both. `TrainSettings` is the one typed form of all three: `check_overrides`, registered as the
`train` entry of the `cobalt.settings` entry points, validates a user's section into it when
the settings load, so a wrong key stops every command with one sentence.

Sections with a fixed meaning are settings sections in the one style of `assistant.settings`
(pydantic models, a description and the default per field, unknown keys refused); the `grpo:`
and `lora:` sections are passed through to `trl.GRPOConfig` / `peft.LoraConfig` as they are
(unknown keys are refused there with one sentence). This module reads settings only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from assistant.config_files import REPO_CONFIGS, read_yaml, validated
from assistant.errors import UserError
from assistant.serving.device import on_gpu
from assistant.settings import Section
from assistant.settings_loader import merge
from trainer.release.gate_settings import GateSettings

TRAIN_CONFIG = REPO_CONFIGS / "train.yaml"


class MixSettings(Section):
    """The `dataset.mix:` section: the training prompts' two parts (trainer.data.mix), `own`
    (the served model's own sessions: every source but `synthetic`) and `synthetic` (`cobalt
    dataset synthesize`), each selected on its own, then combined."""

    synthetic_share: float | None = Field(
        None,
        ge=0,
        le=1,
        description="The synthetic part's share of the training prompts: the part in excess is down-sampled "
        "(seeded) to it; null keeps both parts whole. Not applied when a part has no prompts.",
    )
    max_own: int | None = Field(None, ge=0, description="Training prompts of the own part at most (null: no cap).")
    max_synthetic: int | None = Field(
        None, ge=0, description="Training prompts of the synthetic part at most (null: no cap)."
    )
    own_unsolved: int = Field(
        0,
        ge=0,
        description="Per task of the own part, this many trajectories that failed their first turn and never "
        "solved the task also give their partial prompts (the model's own wrong programs with their feedback); "
        "0: the paper's filter (only trajectories that improved and solved it).",
    )
    first_turn_prompts: bool = Field(
        True,
        description="Each task's first-turn prompt is a training prompt; false trains on repair contexts only "
        "(the validation prompts keep it).",
    )
    synthetic_render: Literal["served", "canonical", "any"] = Field(
        "served",
        description="Synthetic sessions of this rendering only (configs/repair.yaml curriculum.render; "
        "sessions without one are `canonical`); `any` takes both.",
    )


class RationalizeSettings(Section):
    """The `dataset.rationalize:` section: guides in the served model's own words (`cobalt dataset
    rationalize`, trainer/data/rationalize.py): its reply to a guided row's prompt with the guide shown
    as a hint, kept when it passes every test."""

    hint: str = Field(
        "(A note for you alone: a correct program for this task is below. Do not mention this note or say "
        "that you were given a program; reply exactly as you would without it.)\n\n{guide}",
        description="Appended to the prompt's last user message; `{guide}` is the row's guide (its reference "
        "program as a served reply).",
    )
    leaks: list[str] = Field(
        ["note", "hint", "reference", "given program", "provided program", "correct program"],
        description="A reply that says one of these (any case) is dropped: it speaks of the hint, which the "
        "training prompt does not hold.",
    )
    max_tokens: int = Field(768, ge=16, description="Tokens a reply may have (the cpu-small completion length).")
    concurrency: int = Field(4, ge=1, description="Replies requested at once (the server's slots).")


class DatasetSettings(Section):
    k: int = Field(4, description="Max-variance down-sampling keeps at most this many trajectories per task.")
    max_context_turns: int = Field(3, description="Partial prompts are built after 1..this many earlier attempts.")
    max_prompt_tokens: int = Field(
        3072, description="Prompts longer than this (policy tokenizer, chat template applied) are dropped, not cut."
    )
    perturb_fraction: float = Field(
        0.2, description="Share of partial prompts whose context feedback comes from swapped public tests."
    )
    seed: int = Field(0, description="Seeds perturbation choices.")
    sources: list[str] = Field(
        ["tui", "cli", "collect", "debug", "import", "synthetic"],
        description="Session sources used as training data (never `eval`).",
    )
    split: str = Field(
        "train",
        description="`train`: sessions on HumanEval's test and val tasks are left out "
        "(trainer.data.heldout); `all` keeps them.",
    )
    mix: MixSettings = Field(default_factory=MixSettings, description="The own and synthetic parts of the prompts.")
    rationalize: RationalizeSettings = Field(
        default_factory=RationalizeSettings, description="Guides in the served model's own words."
    )


class RewardSettings(Section):
    thinking: bool = Field(
        False, description="The policy thinks in `<think>...</think>`; a missing or repeated `</think>` is malformed."
    )
    repeat_block_chars: int = Field(
        32, description="Degenerate repetition: a block of at least this many characters ..."
    )
    repeat_times: int = Field(8, description="... repeated at least this many times in a row.")
    overlong_penalty: float = Field(
        0.0, description="Most a completion loses for length (0 disables the soft overlong penalty)."
    )
    unchanged_penalty: float = Field(
        0.0,
        ge=0,
        description="Subtracted when a completion resubmits its context's last program unchanged (by "
        "extract.code_key) and that program does not pass every test; 0: the paper's reward, under which an "
        "unchanged resubmission (-0.1) beats any change that passes fewer tests (down to -0.2).",
    )
    overlong_buffer: int = Field(
        64, description="The penalty grows linearly over the last this-many tokens of max_completion_length."
    )
    sandbox_retries: int = Field(
        2, description="Re-runs of a program whose run hit a sandbox fault before the sample is dropped."
    )
    retry_wait_s: float = Field(1.0, description="Pause before each re-run (doubles every time).")


class NightlySettings(Section):
    min_sessions: int = Field(8, description="Fewer new sessions than this: the run is skipped and nothing trains.")
    min_prompts: int = Field(4, description="Fewer training prompts than this: the run is skipped.")
    start_server: bool = Field(True, description="Start the model server for the gate when none runs.")
    keep_runs: int = Field(10, description="Finished run directories kept; older ones are deleted.")


class LauncherSettings(Section):
    num_processes: int = Field(
        1, ge=1, description="Training processes (ranks); above 1, `cobalt train` re-runs under `accelerate launch`."
    )
    cpu: bool | Literal["auto"] = Field(
        "auto", description="True: CPU ranks with the gloo backend; false: one GPU per rank; auto: CPU without CUDA."
    )
    main_process_port: int = Field(0, description="The ranks' rendezvous port (0: a free one).")
    args: list[str] = Field([], description="More `accelerate launch` arguments, e.g. [--config_file, zero2.yaml].")


class ShipSettings(Section):
    dir: str = Field(
        "examples/adapters",
        description="Where the shipped adapters live, relative to the repository (one directory each).",
    )
    max_dataset_mb: float = Field(
        50.0, ge=0, description="`adapters export` copies the dataset in up to this size; above, its path and hashes."
    )


class SharedPrefixSettings(Section):
    loss: bool = Field(
        True, description="In the loss, one forward of each prompt shared by its G completions (with gradients)."
    )
    unpadded: bool = Field(
        True,
        description="In the loss, each completion runs alone on its prompt's shared forward, cut at its own "
        "length, instead of the group padded to its longest completion.",
    )
    generation: bool = Field(True, description="In generation, prefill each prompt once for its G completions.")
    skip_zero_spread: bool = Field(
        True,
        description="No loss forward or backward for completions of advantage 0 when that changes nothing "
        "(beta 0, no entropy bonus): a group whose rewards have no spread costs no backward.",
    )


class RolloutSettings(Section):
    engine: Literal["auto", "transformers", "llama.cpp"] = Field(
        "auto",
        description="Where GRPO completions are generated: the policy's own generate (TRL's path) or a "
        "private llama-server on the quantized base with the step's LoRA (trainer/training/llama_rollout.py); "
        "auto: llama.cpp without CUDA when the model has a GGUF file and llama.cpp is built.",
    )
    lora_dtype: Literal["f32", "f16", "bf16"] = Field(
        "f16", description="The GGUF LoRA's number type for llama.cpp rollouts."
    )


class TrainSettings(Section):
    """Everything the trainer reads, for one profile."""

    profile: str = Field(description="The profile these settings are for.")
    dataset: DatasetSettings = Field(default_factory=DatasetSettings, description="The bandit dataset.")
    reward: RewardSettings = Field(default_factory=RewardSettings, description="The sandbox reward.")
    gate: GateSettings = Field(default_factory=GateSettings, description="The promotion gate.")
    nightly: NightlySettings = Field(default_factory=NightlySettings, description="The nightly job.")
    grpo: dict[str, Any] = Field({}, description="trl.GRPOConfig keys, passed as they are.")
    lora: dict[str, Any] = Field({}, description="peft.LoraConfig keys, passed as they are.")
    continue_from_current: bool = Field(
        True,
        description="Train from the current adapter (its KL reference is the "
        "parent adapter); false starts from the base model.",
    )
    stop_at_fence: bool = Field(
        True, description="End each completion at the closing fence of its python block, as the server does."
    )
    max_minutes: float = Field(0.0, ge=0, description="Wall-clock budget of a training run in minutes (0: none).")
    cpu_bf16: Literal["auto", "always"] = Field(
        "auto",
        description="grpo.bf16 without CUDA: auto = only on a CPU that multiplies bf16 natively (AMX, "
        "AVX512-BF16), else float32; always = as grpo.bf16 says (trainer/training/cpu_bf16.py).",
    )
    suppress_docstrings: bool = Field(
        True, description="Ban the policy's triple-quote tokens in completions, as the server does."
    )
    greedy_anchor: bool = Field(
        False,
        description="Decode the first of each prompt's G completions greedily, the rest sampled "
        "(trainer/training/greedy_anchor.py).",
    )
    guide_anchor: bool = Field(
        False,
        description="Make the last of the G completions of a prompt with a dataset `guide` that guide "
        "(trainer/training/guide_anchor.py, `cobalt dataset guide`).",
    )
    launcher: LauncherSettings = Field(default_factory=LauncherSettings, description="The training processes.")
    ship: ShipSettings = Field(default_factory=ShipSettings, description="Exported and shipped adapters.")
    shared_prefix: SharedPrefixSettings = Field(
        default_factory=SharedPrefixSettings,
        description="Faster steps, same objective (trainer/training/shared_prefix.py).",
    )
    rollouts: RolloutSettings = Field(
        default_factory=RolloutSettings, description="Where completions are generated (transformers or llama.cpp)."
    )
    raw: dict[str, Any] = Field({}, description="The merged mapping these settings were read from.")

    def to_dict(self) -> dict[str, Any]:
        """The merged settings (what was used), for metadata and reports."""
        return {k: v for k, v in self.raw.items() if k != "profiles"} | {"profile": self.profile}


SECTIONS: dict[str, type[Section]] = {
    "dataset": DatasetSettings,
    "reward": RewardSettings,
    "gate": GateSettings,
    "nightly": NightlySettings,
    "launcher": LauncherSettings,
    "ship": ShipSettings,
    "shared_prefix": SharedPrefixSettings,
    "rollouts": RolloutSettings,
}


def _build(cls: type[Section], data: dict[str, Any] | None, section: str) -> Any:
    data = dict(data or {})
    known = set(cls.model_fields)
    unknown = sorted(set(data) - known)
    if unknown:
        raise UserError(
            f"configs/train.yaml: unknown key(s) {', '.join(unknown)} in '{section}'; "
            f"known keys are {', '.join(sorted(known))}"
        )
    return validated(data, cls, prefix=("train", section))


def _minutes(value: Any) -> float | None:
    """`max_minutes` as a number >= 0 (None: not given); UserError of one sentence otherwise."""
    if value is None:
        return None
    try:
        minutes = float(value)
    except (TypeError, ValueError):
        minutes = -1.0
    if minutes < 0:
        raise UserError(f"config key train.max_minutes: must be a number of minutes >= 0 (0: no limit), not {value!r}")
    return minutes


def ship_settings(section: dict[str, Any] | None = None, path: Path | None = None) -> ShipSettings:
    """The `ship:` section alone (train.yaml's, then the user's), without choosing a profile:
    read before every serve, so it must not import torch to find the default profile."""
    base = read_yaml(path or TRAIN_CONFIG).get("ship") or {}
    user = (section or {}).get("ship") or {}
    return _build(ShipSettings, merge(base, user), "ship")


def check_overrides(section: dict[str, Any]) -> None:
    """The check of a user's `train:` section (the `cobalt.settings` entry point): its keys and
    values validated into `TrainSettings` over train.yaml and its profile (`auto` taken as
    cpu-small, whose keys are every profile's: no device is probed); UserError of one sentence."""
    if section:
        load_train_settings(section, None, auto="cpu-small")


def load_train_settings(
    section: dict[str, Any] | None = None, profile: str | None = None, path: Path | None = None, auto: str = ""
) -> TrainSettings:
    """Settings for `profile` (default: the configured one; `auto` picks gpu or cpu-small, or
    `auto` when given), with the user's overrides (the `train:` settings section)."""
    base = read_yaml(path or TRAIN_CONFIG)
    user = dict(section or {})
    known = set(TrainSettings.model_fields) - {"raw"} | {"profiles"}
    if unknown := sorted(set(user) - known):
        raise UserError(
            f"config section train: unknown key(s) {', '.join(unknown)}; known keys are {', '.join(sorted(known))}"
        )
    profiles = merge(base.get("profiles") or {}, user.get("profiles") or {})
    name = profile or str(user.get("profile") or base.get("profile") or "auto")
    if name == "auto":
        name = auto or ("gpu" if on_gpu() else "cpu-small")
    if name not in profiles:
        raise UserError(f"no training profile named {name!r}; profiles: {', '.join(sorted(profiles))}")

    def plain(data: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in data.items() if k not in ("profiles", "profile")}

    merged = merge(merge(plain(base), profiles[name] or {}), plain(user))  # the user's keys win
    merged["profile"] = name
    given = {k: v for k, v in merged.items() if k in TrainSettings.model_fields and k not in SECTIONS}
    given["max_minutes"] = _minutes(given.get("max_minutes"))
    sections = {key: _build(cls, merged.get(key), key) for key, cls in SECTIONS.items()}
    data = {k: v for k, v in given.items() if v is not None} | sections | {"raw": merged}
    return validated(data, TrainSettings, prefix=("train",))
