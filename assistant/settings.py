"""The typed settings: one `Settings` object with a section per concern (model, server,
sandbox, loop, paths, collect, eval, train), each field documented, with the defaults that
`configs/default.yaml` and `configs/eval.yaml` spell out.

`assistant.settings_loader.load_settings` builds it once per process (YAML files, `--config FILE`,
`COBALT__SECTION__KEY` variables, `COBALT_HOME`); commands hand each function below them
the section(s) it needs. The sandbox section is the sandbox package's own `SandboxSettings`.
The `train:` section is a user's overrides of `configs/train.yaml`, owned by the trainer: it
registers the check of the section (`cobalt.settings` entry points, run by the loader) and merges
it over its profiles into its one typed form (`trainer.train_settings.load_train_settings`). Each default is stated
once, by its field here (the shipped YAML files spell the same values out, and a test holds
them equal). This module describes and validates settings; it opens no file of its own (the
prompt names are checked against `assistant.config_files.prompt_catalog`, configs/prompts.yaml
read once; it only creates the data and cache directories it resolves).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, get_origin

import yaml
from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from assistant.config_files import prompt_catalog
from assistant.debug.debug_settings import DebugSettings
from assistant.messages.repetition import RepeatStop
from assistant.serving.llama_settings import LlamaSettings
from sandbox.sandbox_settings import SandboxSettings, Section

ENV_PREFIX = "COBALT__"
DEFAULT_ANSWER_FORMAT = "code_first"
DEFAULT_FEEDBACK_WORDING = "instruction_last"


class ModelSettings(Section):
    name: str = Field(
        "qwen-coder-1.5b",
        description="A name from `cobalt models list`, a local checkpoint "
        "directory, or any litellm model id (e.g. openai/gpt-4o-mini).",
    )
    adapter: str | None = Field(
        None,
        description="The adapter a local model is served with: null, the promoted one (or the shipped one "
        "when nothing was chosen); `base`, the bare model; `vN`, a registered version.",
    )
    max_tokens: int = Field(1024, ge=1, description="Completion tokens per reply.")
    timeout_s: float = Field(300, gt=0, description="Seconds one completion request may take.")
    retries: int = Field(2, ge=0, description="Retries of a failed completion request (litellm's num_retries).")
    stop_at_fence: bool = Field(
        True, description="End each reply at its ```python block's closing fence (as training)."
    )
    stop_on_repetition: bool = Field(True, description="End a reply whose tail repeats a block (repeat_block_chars).")
    repeat_block_chars: int = Field(32, ge=1, description="Shortest repeated block that counts as a loop.")
    repeat_times: int = Field(8, ge=2, description="Repetitions in a row that count as a loop.")
    suppress_docstrings: bool = Field(
        True, description="Ban a local model's triple-quote tokens (no docstring copies)."
    )

    def client_options(self) -> dict[str, Any]:
        """The ChatClient keyword arguments these settings give (timeouts, stops)."""
        stop = RepeatStop(self.repeat_block_chars, self.repeat_times) if self.stop_on_repetition else None
        return dict(
            timeout_s=self.timeout_s,
            retries=self.retries,
            max_tokens=self.max_tokens,
            stop_at_fence=self.stop_at_fence,
            repeat_stop=stop,
        )


class SpeculativeSettings(Section):
    enabled: bool = Field(
        False, description="Serve with vLLM speculative decoding (started again without it when the server refuses)."
    )
    method: str = Field("ngram", description="vLLM's proposer: ngram is prompt lookup, no draft model.")
    num_speculative_tokens: int = Field(4, ge=1, description="Tokens proposed per step.")
    prompt_lookup_max: int = Field(4, ge=1, description="Longest n-gram matched in the context.")
    prompt_lookup_min: int = Field(2, ge=1, description="Shortest n-gram matched in the context.")


class ServerSettings(Section):
    engine: Literal["auto", "vllm", "llama.cpp"] = Field(
        "auto",
        description="The serving engine: auto is vLLM where CUDA answers and llama.cpp's server on CPU.",
    )
    llama: LlamaSettings = Field(default_factory=LlamaSettings, description="llama.cpp's server settings.")
    host: str = Field("127.0.0.1", description="Address the local model server listens on.")
    port: int = Field(8011, ge=1, le=65535, description="Its port.")
    startup_timeout_s: float = Field(600, gt=0, description="Seconds the server may take to become healthy.")
    max_model_len: int = Field(4096, ge=1, description="Context length the server allows (vLLM --max-model-len).")
    max_loras: int = Field(4, ge=1, description="LoRA adapters loaded at once (vLLM --max-loras).")
    tensor_parallel_size: int = Field(
        1, ge=1, description="GPUs one model replica is split over (vLLM --tensor-parallel-size)."
    )
    data_parallel_size: int = Field(
        1, ge=1, description="Model replicas behind the one server (vLLM --data-parallel-size)."
    )
    max_lora_rank: int = Field(64, ge=1, description="Largest LoRA rank served (vLLM --max-lora-rank).")
    cpu_kvcache_space_gb: int = Field(4, ge=1, description="KV cache size on CPU (VLLM_CPU_KVCACHE_SPACE).")
    cpu_dtype: str = Field("float32", description="Weights' dtype on CPU (vLLM --dtype).")
    gpu_memory_utilization: float = Field(0.85, gt=0, le=1, description="Share of GPU memory vLLM may take.")
    gpu_dtype: str = Field("auto", description="Weights' dtype on GPU (vLLM --dtype).")
    speculative: SpeculativeSettings = Field(
        default_factory=SpeculativeSettings, description="Prompt-lookup speculative decoding (issue 13)."
    )
    prefix_caching: bool | None = Field(True, description="vLLM prefix caching (None: vLLM's default).")
    preload: list[str] = Field(
        ["libtcmalloc_minimal.so.4", "libiomp5.so"], description="Libraries put in the server's LD_PRELOAD when found."
    )
    serve_merged: bool = Field(
        True,
        description="Merge an adapter into its base at promote time and serve "
        "that checkpoint on the assistant's next server start.",
    )


class LoopSettings(Section):
    """How one session samples and stops."""

    turns: int = Field(
        4, ge=1, description="T: the most turns a session takes; it stops earlier once every public test passes."
    )
    temperature: list[float] = Field(
        [0.6], min_length=1, description="Sampling temperature per turn: entry i for turn i, the last for later turns."
    )
    top_p: float = Field(0.95, gt=0, le=1, description="Nucleus sampling of every turn.")
    repeat_resamples: int = Field(
        2, ge=0, description="How many times a reply repeating an earlier turn's program is sampled again."
    )
    repeat_temperature: float = Field(1.0, ge=0, description="The temperature of those resamples.")
    candidates: int = Field(
        1,
        ge=1,
        le=16,
        description="Replies sampled at once per model turn; the one passing the most public tests is kept "
        "(the first on ties; assistant/loop/candidates.py). 1: one reply, with repeat resampling.",
    )
    candidate_temperature: float = Field(
        1.0, ge=0, le=2, description="The sampling temperature of every candidate after the first."
    )
    sanitize_answers: bool = Field(
        True,
        description="For function problems, run only a reply's imports, definitions and constants, not the "
        "asserts, prints and example calls the model added around them (assistant/loop/sanitize.py).",
    )
    feedback_field_chars: int = Field(
        400, ge=1, description="Each feedback field is cut to this many characters (half from each end)."
    )
    max_tokens: int | None = Field(None, description="Completion tokens per reply (default: model.max_tokens).")
    timeout_s: float | None = Field(
        None,
        description="The sandbox's per-test timeout quoted in timeout feedback (default: sandbox.limits.timeout_s).",
    )
    answer_format: str = Field(
        DEFAULT_ANSWER_FORMAT,
        description="The first turn's answer format (a name under configs/prompts.yaml answer_formats).",
    )
    feedback_wording: str | None = Field(
        None,
        description="The feedback turn's wording (a name under configs/prompts.yaml feedback_wordings); null: "
        "the served model's own (prompts.yaml model_wordings), else " + DEFAULT_FEEDBACK_WORDING + ".",
    )

    @field_validator("answer_format")
    @classmethod
    def _known_answer_format(cls, value: str) -> str:
        prompt_catalog().answer_format(value)  # PromptError, a ValueError, names the known ones
        return value

    @field_validator("feedback_wording")
    @classmethod
    def _known_feedback_wording(cls, value: str | None) -> str | None:
        if value is not None:
            prompt_catalog().feedback_wording(value)
        return value

    @field_validator("temperature", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return value if isinstance(value, (list, tuple)) else [value]

    def temperature_for(self, turn: int) -> float:
        temps = self.temperature or [0.6]
        return float(temps[min(turn, len(temps) - 1)])

    def merged(self, overrides: dict[str, Any]) -> "LoopSettings":
        """A validated copy with some keys replaced (e.g. the `eval.loop` overrides)."""
        return type(self).model_validate(self.model_dump() | dict(overrides))

    def with_turns(self, turns: int | None) -> "LoopSettings":
        """A copy with `turns` turns (None: unchanged), e.g. from a command's --turns."""
        return self if turns is None else self.merged({"turns": turns})


def _env_dir(*names: str) -> str:
    return next((os.environ[n] for n in names if os.environ.get(n)), "")


class PathsSettings(Section):
    """Where Cobalt keeps its data and its cache; empty values are resolved when loading:
    data: $COBALT_HOME, else $XDG_DATA_HOME/cobalt (~/.local/share/cobalt); cache:
    $COBALT_CACHE, else $COBALT_HOME/cache, else $XDG_CACHE_HOME/cobalt (~/.cache/cobalt)."""

    data_dir: Path = Field(Path(""), description="The trajectory store, adapters, runs and server state.")
    cache_dir: Path = Field(Path(""), description="Downloaded wheels and prepared model checkpoints.")

    @model_validator(mode="after")
    def _resolve(self) -> "PathsSettings":
        if str(self.data_dir) in ("", "."):
            home = _env_dir("COBALT_HOME")
            self.data_dir = (
                Path(home) if home else Path(_env_dir("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "cobalt"
            )
        if str(self.cache_dir) in ("", "."):
            cache, home = _env_dir("COBALT_CACHE"), _env_dir("COBALT_HOME")
            self.cache_dir = (
                Path(cache)
                if cache
                else Path(home) / "cache"
                if home
                else Path(_env_dir("XDG_CACHE_HOME") or Path.home() / ".cache") / "cobalt"
            )
        # absolute: servers start in the data dir, so a relative path would name another place there
        self.data_dir, self.cache_dir = self.data_dir.expanduser().resolve(), self.cache_dir.expanduser().resolve()
        for folder in (self.data_dir, self.cache_dir):
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a ValueError becomes the settings' one-sentence error
                raise ValueError(f"cannot create {folder} ({exc.strerror or exc})") from None
        return self


def resolved(paths: PathsSettings | None) -> PathsSettings:
    """`paths`, or the default directories resolved from the environment now."""
    return paths if paths is not None else PathsSettings()


class CollectSettings(Section):
    samples: int = Field(4, ge=1, description="Sessions per problem that `cobalt collect` runs.")
    concurrency: int = Field(4, ge=1, description="Sessions run at once.")
    abort_after_errors: int = Field(
        3, ge=1, description="Consecutive sessions ending on the same kind of error stop a run."
    )
    share_greedy_first_turn: bool = Field(
        True,
        description="With a greedy first turn, a problem's sessions share one: the others start from a copy of it.",
    )


class SplitSection(Section):
    """The deterministic splits (`assistant.problems.splits`); its defaults are the only ones in the code."""

    seed: int = Field(20260101, description='Orders task ids by sha256("<seed>:<id>"); fixed forever for HumanEval.')
    test_share: float = Field(0.5, ge=0, le=1, description="Share of the task ids in the `test` split (rounded).")
    val_share_of_train: float = Field(0.2, ge=0, le=1, description="Share of the train pool carved out as `val`.")

    @property
    def split_seed(self) -> int:
        """The seed under the name a split `Rule` (assistant.interfaces) gives it: this section is
        the Rule of `assistant.problems.splits`."""
        return self.seed


class PerturbSection(Section):
    seed: int = Field(0, description="Seeds which two public tests of a problem swap expected outputs.")


class BootstrapSection(Section):
    """The percentile bootstrap of every interval (`trainer.eval.bootstrap`: evaluation, the repair
    benchmark, and the promotion gate unless `train.gate.bootstrap` is set); its defaults are the
    only ones in the code."""

    resamples: int = Field(2000, ge=1, description="Percentile bootstrap resamples (over problems).")
    confidence: float = Field(0.95, gt=0, lt=1, description="Width of every bootstrap interval.")
    seed: int = Field(0, description="Seeds the bootstrap, so a report is reproducible from its samples.")


class CompareSection(Section):
    metric: str = Field("pass_at_1", description="The metric the `not_worse` verdict of a comparison looks at.")
    turn: int = Field(-1, description="The turn of that metric (-1: the last).")
    margin: float = Field(
        0.0, ge=0, description="Not worse: the upper end of the paired interval of (B - A) is at least -margin."
    )


class EvalSection(Section):
    """`configs/eval.yaml`: what `cobalt eval` and the retraining gate read."""

    split: SplitSection = Field(default_factory=SplitSection, description="The deterministic splits.")
    perturb: PerturbSection = Field(default_factory=PerturbSection, description="Perturbed-feedback evaluation.")
    bootstrap: BootstrapSection = Field(default_factory=BootstrapSection, description="Confidence intervals.")
    loop: dict[str, Any] = Field(
        {"repeat_resamples": 0}, description="Overrides of the `loop:` section for evaluation sessions."
    )
    compare: CompareSection = Field(default_factory=CompareSection, description="The verdict of a comparison.")

    def loop_settings(self, loop: LoopSettings, turns: int) -> LoopSettings:
        """The loop settings of evaluation sessions: `loop` with the `loop:` overrides, `turns` turns."""
        return loop.merged({**self.loop, "turns": turns})


def _scalars(value: Any) -> Any:
    """Text from the environment read as a YAML scalar (`3` an int, `true` a bool), as in a file."""
    if isinstance(value, dict):
        return {k: _scalars(v) for k, v in value.items()}
    if not (isinstance(value, str) and value):
        return value
    try:
        return yaml.safe_load(value)
    except yaml.YAMLError:  # not YAML (a glob `*.jsonl`, an unclosed `[1,`): the text as it is
        return value


def _free_form(model: Any, data: dict[str, Any]) -> dict[str, Any]:
    """Parse the values under free-form mappings (train.grpo, eval.loop, ...) of `model`;
    typed fields are left to pydantic."""
    if get_origin(model) is dict:  # a section owned by a plug-in (train): all of it free-form
        return _scalars(data)
    fields = model.model_fields if isinstance(model, type) and issubclass(model, BaseModel) else {}
    for key, value in data.items():
        annotation = fields[key].annotation if key in fields else None
        if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(value, dict):
            _free_form(annotation, value)
        elif annotation is not None and get_origin(annotation) is dict:
            data[key] = _scalars(value)
    return data


class _EnvSource(EnvSettingsSource):
    """`COBALT__SECTION__KEY` variables, nested by `__`."""

    def explode_env_vars(self, field_name: str, field: FieldInfo, env_vars: Any) -> dict[str, Any]:
        return _free_form(field.annotation, super().explode_env_vars(field_name, field, env_vars))


class Settings(BaseSettings):
    """Everything Cobalt reads from its configuration."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", case_sensitive=False
    )

    model: ModelSettings = Field(default_factory=ModelSettings, description="The chat model and its requests.")
    server: ServerSettings = Field(default_factory=ServerSettings, description="The local vLLM server.")
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings, description="The Docker sandbox.")
    loop: LoopSettings = Field(default_factory=LoopSettings, description="The solve loop of one session.")
    paths: PathsSettings = Field(default_factory=PathsSettings, description="Data and cache directories.")
    collect: CollectSettings = Field(default_factory=CollectSettings, description="`cobalt collect` runs.")
    eval: EvalSection = Field(default_factory=EvalSection, description="Evaluation and comparison.")
    train: dict[str, Any] = Field(
        {}, description="Overrides of configs/train.yaml: the trainer's section (`cobalt.settings` entry point)."
    )
    debug: DebugSettings = Field(default_factory=DebugSettings, description="`cobalt debug` on a user's project.")

    @model_validator(mode="after")
    def _derive_loop(self) -> "Settings":
        """The loop quotes the model's reply budget and the sandbox's per-test timeout."""
        if self.loop.max_tokens is None:
            self.loop.max_tokens = self.model.max_tokens
        if self.loop.timeout_s is None:
            self.loop.timeout_s = self.sandbox.limits.timeout_s
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        *args: Any,
        **kwargs: Any,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """`COBALT__SECTION__KEY` variables over the merged YAML files (given as init values)."""
        return _EnvSource(settings_cls), init_settings
