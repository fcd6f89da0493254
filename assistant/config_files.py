"""The shipped `configs/` directory and reading its YAML files: `read_yaml` (a mapping, or a
ConfigError naming the file), `describe` (a validation error as one sentence naming the
config key), `read_typed` (a file validated into a pydantic model), and the catalogue of
prompt words (configs/prompts.yaml), read once into a typed `PromptCatalog` by
`prompt_catalog`.

It sits below `assistant.settings`, which checks `loop.answer_format` and
`loop.feedback_wording` against the catalogue, and below `assistant.settings_loader`, which
merges the configuration files into one `Settings`. How the prompt words become messages is
`assistant.loop.prompts`. This module reads files; it runs nothing.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assistant.errors import ConfigError

REPO_CONFIGS = Path(__file__).resolve().parent.parent / "configs"
PROMPTS_YAML = REPO_CONFIGS / "prompts.yaml"

M = TypeVar("M", bound=BaseModel)


def read_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping, raising ConfigError with the file name on any problem."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"config file {path} cannot be read ({exc.strerror or exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    return data


# Plain words for pydantic's error types; others keep pydantic's message.
_PLAIN = {
    "int_parsing": "must be an integer",
    "int_type": "must be an integer",
    "int_from_float": "must be an integer",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "string_type": "must be text",
    "list_type": "must be a list",
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "dataclass_type": "must be a mapping",
    "extra_forbidden": "is not a known setting",
    "unexpected_keyword_argument": "is not a known setting",
}


def describe(error: ValidationError, prefix: tuple[str, ...] = ()) -> str:
    """The first problem of a validation error as one sentence naming the config key
    (`prefix`: the keys above the validated mapping, e.g. ("train", "gate"))."""
    first = error.errors()[0]
    key = ".".join(str(part) for part in (*prefix, *first["loc"])) or "(top level)"
    words = _PLAIN.get(first["type"])
    if words is None:
        words = first["msg"].replace("Input should be", "must be").replace("Value error, ", "")
        words = words[:1].lower() + words[1:]
    if first["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
        return f"config key {key}: {words}"
    return f"config key {key}: {words}, got {first['input']!r}"


def validated(data: Any, model: type[M], path: Path | None = None, prefix: tuple[str, ...] = ()) -> M:
    """`data` (read from the file at `path`, under the keys `prefix`) validated as `model`: the one
    way every YAML file becomes typed settings; ConfigError (one sentence naming the file and the
    key) when it does not fit."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        where = f"config file {path}: " if path is not None else ""
        raise ConfigError(where + describe(exc, prefix)) from None


def read_typed(path: Path, model: type[M]) -> M:
    """The YAML mapping at `path` validated as `model` (`validated`)."""
    return validated(read_yaml(path), model, path)


class PromptError(ValueError):
    """An unknown or malformed answer format or feedback wording; the message is one sentence."""


class FeedbackWording(BaseModel):
    """One feedback wording: the feedback turn is `prefix` + the feedback text + `suffix`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prefix: str = Field(
        "",
        description="The words before the feedback text; they end with the marker "
        "'Here is the execution feedback:' (assistant.loop.prompts.MARKER).",
    )
    suffix: str = Field("", description="The words after the feedback text.")

    @field_validator("prefix", "suffix", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


class PromptCatalog(BaseModel):
    """configs/prompts.yaml: the named answer formats and feedback wordings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer_formats: dict[str, str] = Field(
        {}, description="The answer-format paragraphs of the first user turn, by name."
    )
    feedback_wordings: dict[str, FeedbackWording] = Field({}, description="The feedback turn's wordings, by name.")
    debug_formats: dict[str, str] = Field(
        {}, description="How `cobalt debug` asks for an edit (functions, search_replace): the answer paragraph."
    )
    model_wordings: dict[str, str] = Field(
        {},
        description="A built-in model's own feedback wording, where it measured better than the default "
        "(model name -> a name under feedback_wordings); used when loop.feedback_wording is null.",
    )

    @field_validator("answer_formats")
    @classmethod
    def _stripped(cls, value: dict[str, str]) -> dict[str, str]:
        return {name: text.strip() for name, text in value.items()}

    def answer_format(self, name: str) -> str:
        """The answer-format paragraph `name`; PromptError (one sentence) for an unknown name."""
        return _named("answer format", name, self.answer_formats)

    def debug_format(self, name: str) -> str:
        """The debug answer paragraph `name`; PromptError (one sentence) for an unknown name."""
        return _named("debug edit format", name, self.debug_formats).strip()

    def feedback_wording(self, name: str) -> FeedbackWording:
        """The feedback wording `name`; PromptError (one sentence) for an unknown name."""
        return _named("feedback wording", name, self.feedback_wordings)

    @model_validator(mode="after")
    def _known_model_wordings(self) -> "PromptCatalog":
        for name in self.model_wordings.values():
            self.feedback_wording(name)
        return self


def _named(kind: str, name: str, known: dict[str, Any]) -> Any:
    if name not in known:
        raise PromptError(f"unknown {kind} {name!r}; use one of {', '.join(known)}")
    return known[name]


@cache
def prompt_catalog(path: Path = PROMPTS_YAML) -> PromptCatalog:
    """configs/prompts.yaml (or `path`), read once per process."""
    return read_typed(path, PromptCatalog)
