"""The settings loader: `configs/default.yaml` and `configs/eval.yaml` (as the `eval:` section),
deep-merged with `--config FILE` (or $COBALT_CONFIG), then `COBALT__SECTION__KEY=value`
variables (pydantic-settings, `env_nested_delimiter="__"`), into one typed `Settings`.

A value that does not fit gives a ConfigError of one sentence naming the key, e.g.
"config key sandbox.pool_size: must be an integer, got 'x'". This is the only place that
sees the whole configuration as a mapping; what the settings mean lives in
`assistant.settings`.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from pydantic import ValidationError

    from assistant.settings import Settings

REPO_CONFIGS = Path(__file__).resolve().parent.parent / "configs"
DEFAULT_CONFIG = REPO_CONFIGS / "default.yaml"
EVAL_CONFIG = REPO_CONFIGS / "eval.yaml"


class ConfigError(Exception):
    """A configuration file or override is unusable; the message says which and why."""


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` deep-merged onto a copy of `base` (nested mappings merge, other values replace)."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def read_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping, raising ConfigError with the file name on any problem."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    return data


# Plain words for pydantic's error types; others keep pydantic's message.
_PLAIN = {
    "int_parsing": "must be an integer", "int_type": "must be an integer",
    "int_from_float": "must be an integer", "float_parsing": "must be a number",
    "float_type": "must be a number", "bool_parsing": "must be true or false",
    "bool_type": "must be true or false", "string_type": "must be text",
    "list_type": "must be a list", "dict_type": "must be a mapping", "model_type": "must be a mapping",
    "dataclass_type": "must be a mapping", "extra_forbidden": "is not a known setting",
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


def load_settings(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """The settings: defaults, then the file at `path` (or $COBALT_CONFIG), then `overrides`
    (a mapping shaped like a config file, e.g. from a test), then COBALT__* variables."""
    from pydantic import ValidationError

    from assistant.settings import Settings

    data = merge(read_yaml(DEFAULT_CONFIG), {"eval": read_yaml(EVAL_CONFIG)})
    path = path or os.environ.get("COBALT_CONFIG")
    if path:
        data = merge(data, read_yaml(Path(path)))
    data = merge(data, overrides or {})
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise ConfigError(describe(exc)) from None
