"""The settings loader: `configs/default.yaml` and `configs/eval.yaml` (as the `eval:` section),
deep-merged with `--config FILE` (or $COBALT_CONFIG), then `COBALT__SECTION__KEY=value`
variables (pydantic-settings, `env_nested_delimiter="__"`), into one typed `Settings`.

A value that does not fit gives a ConfigError of one sentence naming the key, e.g.
"config key sandbox.pool_size: must be an integer, got 'x'" (`describe`). A section an upper
package owns (`train:`) is checked by the function it registers in the `cobalt.settings`
entry-point group (`trainer.train_settings.check_overrides`). This is the only
place that sees the whole configuration as a mapping; what the settings mean lives in
`assistant.settings`, reading the files in `assistant.config_files`.
"""

from __future__ import annotations

import copy
import os
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_settings import SettingsError

from assistant.config_files import REPO_CONFIGS, describe, read_yaml
from assistant.errors import ConfigError, UserError
from assistant.settings import ENV_PREFIX, Settings

SECTION_CHECKS = "cobalt.settings"  # entry points: section name -> check(mapping), raising one sentence
DEFAULT_CONFIG = REPO_CONFIGS / "default.yaml"
EVAL_CONFIG = REPO_CONFIGS / "eval.yaml"

__all__ = ["ConfigError", "describe", "load_settings", "merge", "read_yaml", "DEFAULT_CONFIG", "EVAL_CONFIG"]


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` deep-merged onto a copy of `base` (nested mappings merge, other values replace)."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _known_sections() -> None:
    """A `COBALT__SECTION__...` variable whose section is not one (`COBALT__SEVER__PORT`) would be
    passed over without a word; it is a ConfigError naming it."""
    sections = set(Settings.model_fields)
    for name in os.environ:
        if not name.upper().startswith(ENV_PREFIX):
            continue
        section = name[len(ENV_PREFIX) :].split("__", 1)[0].lower()
        if section not in sections:
            raise ConfigError(
                f"{name}: there is no settings section {section!r}; the sections are {', '.join(sorted(sections))}"
            )


def load_settings(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """The settings: defaults, then the file at `path` (or $COBALT_CONFIG), then `overrides`
    (a mapping shaped like a config file, e.g. from a test), then COBALT__* variables."""
    data = merge(read_yaml(DEFAULT_CONFIG), {"eval": read_yaml(EVAL_CONFIG)})
    path = path or os.environ.get("COBALT_CONFIG")
    if path:
        data = merge(data, read_yaml(Path(path)))
    data = merge(data, overrides or {})
    _known_sections()
    try:
        settings = Settings(**data)
    except ValidationError as exc:
        raise ConfigError(describe(exc)) from None
    except SettingsError as exc:  # a COBALT__* variable that does not parse as its setting's type
        raise ConfigError(f"{exc}; a list or mapping setting takes JSON, e.g. '[0.2, 0.6]'") from None
    for point in entry_points(group=SECTION_CHECKS):
        try:
            point.load()(getattr(settings, point.name))
        except (UserError, ValueError) as exc:  # the check's one sentence names the key
            raise ConfigError(str(exc)) from None
    return settings
