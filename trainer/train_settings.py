"""The trainer's settings: `configs/train.yaml`, then the chosen profile (`cpu-small`, `gpu`,
`test`, or one a user adds under `train.profiles`), then the loaded `train:` settings section
(`assistant.settings.TrainSection`: `--config FILE` and `COBALT__TRAIN__...` variables), which
overrides both.

Sections with a fixed meaning are (pydantic, so type-checked) dataclasses with a docstring per field; the `grpo:` and
`lora:` sections are passed through to `trl.GRPOConfig` / `peft.LoraConfig` as they are
(unknown keys are refused there with one sentence). This module reads settings only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError
from pydantic.dataclasses import dataclass as pydantic_dataclass

from assistant.settings_loader import REPO_CONFIGS, describe, merge, read_yaml
from assistant.serving.device import on_gpu
from assistant.errors import UserError
from assistant.settings import TrainSection

TRAIN_CONFIG = REPO_CONFIGS / "train.yaml"


@pydantic_dataclass
class DatasetSettings:
    k: int = 4
    """Max-variance down-sampling keeps at most this many trajectories per task."""
    max_context_turns: int = 3
    """Partial prompts are built after 1..this many earlier attempts."""
    max_prompt_tokens: int = 3072
    """Prompts longer than this (policy tokenizer, chat template applied) are dropped, not cut."""
    perturb_fraction: float = 0.2
    """Share of partial prompts whose context feedback comes from swapped public tests."""
    seed: int = 0
    """Seeds perturbation choices."""
    sources: list[str] = field(default_factory=lambda: ["tui", "cli", "collect", "debug", "import", "synthetic"])
    """Session sources used as training data (never `eval`)."""
    split: str = "train"
    """`train`: sessions on HumanEval's test and val tasks are left out (trainer.data.heldout); `all` keeps them."""


@pydantic_dataclass
class RewardSettings:
    thinking: bool = False
    """The policy thinks in `<think>...</think>`; a missing or repeated `</think>` is malformed."""
    repeat_block_chars: int = 32
    """Degenerate repetition: a block of at least this many characters ..."""
    repeat_times: int = 8
    """... repeated at least this many times in a row."""
    overlong_penalty: float = 0.0
    """Most a completion loses for length (0 disables the soft overlong penalty)."""
    overlong_buffer: int = 64
    """The penalty grows linearly over the last this-many tokens of max_completion_length."""
    sandbox_retries: int = 2
    """Re-runs of a program whose run hit a sandbox fault before the sample is dropped."""
    retry_wait_s: float = 1.0
    """Pause before each re-run (doubles every time)."""


@pydantic_dataclass(frozen=True)
class SimSettings:
    """The `gate.simulation:` section: what `trainer.release.gate_sim` assumes of the data (keys it
    does not know are ignored)."""

    base_rate: float = 0.3
    """The reference's mean fix rate."""
    discordance: float = 0.25
    """Share of items on which candidate and reference differ."""
    task_concentration: float = 4.0
    """Beta concentration of the per-task rates (smaller: tasks differ more)."""
    drop: float = 0.10
    """The drop that must be refused ..."""
    refuse_at_least: float = 0.90
    """... at least this often."""
    simulations: int = 400
    """Simulated gate runs per estimate."""
    resamples: int = 1000
    """Bootstrap resamples per simulated run."""
    seed: int = 0
    """Seeds the simulated data."""


@pydantic_dataclass
class GateSettings:
    benchmark: str = "humaneval-repair"
    """The repair items the gate runs: humaneval-repair (pinned) or repair:FILE.jsonl."""
    split: str = "val"
    """Their split: the validation split, never training tasks."""
    turns: int = 1
    """Model turns after the buggy program (greedy, with feedback)."""
    max_problems: int = 0
    """A deterministic subset of this many tasks, all their items (0: every task of the split)."""
    margin: float = 0.10
    """Promote only when the paired interval's lower end is above -margin against every reference."""
    bootstrap: int = 2000
    """Paired bootstrap resamples, over tasks."""
    confidence: float = 0.95
    """Width of the bootstrap interval."""
    concurrency: int = 4
    """Sessions run at once."""
    seed: int = 0
    """Seeds the task subset and the bootstrap."""
    simulation: SimSettings = field(default_factory=SimSettings)
    """What the size simulation assumes (trainer.release.gate_sim)."""


@pydantic_dataclass
class NightlySettings:
    min_sessions: int = 8
    """Fewer new sessions than this: the run is skipped and nothing trains."""
    min_prompts: int = 4
    """Fewer training prompts than this: the run is skipped."""
    start_server: bool = True
    """Start the model server for the gate when none runs."""
    keep_runs: int = 10
    """Finished run directories kept; older ones are deleted."""


@pydantic_dataclass
class LauncherSettings:
    num_processes: int = Field(1, ge=1)
    """Training processes (ranks); above 1, `cobalt train` re-runs under `accelerate launch`."""
    cpu: bool | Literal["auto"] = "auto"
    """True: CPU ranks with the gloo backend; false: one GPU per rank; auto: CPU without CUDA."""
    main_process_port: int = 0
    """The ranks' rendezvous port (0: a free one)."""
    args: list[str] = field(default_factory=list)
    """More `accelerate launch` arguments, e.g. [--config_file, zero2.yaml]."""


def _build(cls: type, data: dict[str, Any] | None, section: str) -> Any:
    data = dict(data or {})
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise UserError(f"configs/train.yaml: unknown key(s) {', '.join(unknown)} in '{section}'; "
                        f"known keys are {', '.join(sorted(known))}")
    try:
        return cls(**data)
    except ValidationError as exc:
        raise UserError(describe(exc, prefix=("train", section))) from None


@dataclass
class TrainSettings:
    """Everything the trainer reads, for one profile."""

    profile: str
    dataset: DatasetSettings
    reward: RewardSettings
    gate: GateSettings
    nightly: NightlySettings
    grpo: dict[str, Any]
    lora: dict[str, Any]
    continue_from_current: bool = True
    stop_at_fence: bool = True
    max_minutes: float = 0.0
    suppress_docstrings: bool = True
    launcher: LauncherSettings = field(default_factory=LauncherSettings)
    raw: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The merged settings (what was used), for metadata and reports."""
        return {k: v for k, v in self.raw.items() if k != "profiles"} | {"profile": self.profile}


def _minutes(value: Any) -> float:
    try:
        minutes = float(value or 0)
    except (TypeError, ValueError):
        minutes = -1.0
    if minutes < 0:
        raise UserError(f"configs/train.yaml: max_minutes must be a number of minutes >= 0 (0: no limit), not {value!r}")
    return minutes


def load_train_settings(section: TrainSection | None = None, profile: str | None = None,
                        path: Path | None = None) -> TrainSettings:
    """Settings for `profile` (default: the configured one; `auto` picks gpu or cpu-small),
    with the user's overrides from the `train:` settings `section`."""
    base = read_yaml(path or TRAIN_CONFIG)
    user = section.overrides() if section is not None else {}
    profiles = merge(base.get("profiles") or {}, user.get("profiles") or {})
    name = profile or str(user.get("profile") or base.get("profile") or "auto")
    if name == "auto":
        name = "gpu" if on_gpu() else "cpu-small"
    if name not in profiles:
        raise UserError(f"no training profile named {name!r}; profiles: {', '.join(sorted(profiles))}")

    def plain(data: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in data.items() if k not in ("profiles", "profile")}

    merged = merge(merge(plain(base), profiles[name] or {}), plain(user))  # the user's keys win
    merged["profile"] = name
    return TrainSettings(
        profile=name,
        dataset=_build(DatasetSettings, merged.get("dataset"), "dataset"),
        reward=_build(RewardSettings, merged.get("reward"), "reward"),
        gate=_build(GateSettings, merged.get("gate"), "gate"),
        nightly=_build(NightlySettings, merged.get("nightly"), "nightly"),
        grpo=dict(merged.get("grpo") or {}),
        lora=dict(merged.get("lora") or {}),
        continue_from_current=bool(merged.get("continue_from_current", True)),
        stop_at_fence=bool(merged.get("stop_at_fence", True)),
        max_minutes=_minutes(merged.get("max_minutes", 0)),
        suppress_docstrings=bool(merged.get("suppress_docstrings", True)),
        launcher=_build(LauncherSettings, merged.get("launcher"), "launcher"),
        raw=merged,
    )
