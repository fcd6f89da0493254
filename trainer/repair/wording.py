"""The words of the feedback turn (issue 12 item 4): named wordings from configs/repair.yaml
(`feedback_wordings:`), the blind control's re-ask (`reask:`), and `configs/repair.yaml`
itself (`repair_config`).

A wording is `prefix` + feedback text + `suffix`; the `default` wording is exactly
`assistant.prompts.feedback_content`. Until `assistant.prompts` takes the wording as a
parameter (see `feedback_content` below) the loop, the dataset builder and serving use
only the default; the repair benchmark applies any wording to its sessions' feedback
turns. This module formats text only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant import prompts
from assistant.config import REPO_CONFIGS, merge, read_yaml

MARKER = "Here is the execution feedback:"
DEFAULT = "default"


class WordingError(ValueError):
    """An unknown or malformed wording; the message is one sentence."""


def repair_config(overrides: dict[str, Any] | None = None, path: Path | None = None) -> dict[str, Any]:
    """configs/repair.yaml (or `path`), with `overrides` deep-merged over it."""
    return merge(read_yaml(path or REPO_CONFIGS / "repair.yaml"), overrides or {})


@dataclass(frozen=True)
class Wording:
    """One feedback-turn wording. `prefix=None` is prompts.py's own prefix."""

    name: str
    prefix: str | None = None
    suffix: str = ""

    def content(self, feedback_text: str) -> str:
        """The feedback turn's text (what `prompts.feedback_content` gives for `default`)."""
        return feedback_content(feedback_text, self)


def feedback_content(feedback_text: str, wording: Wording | None = None) -> str:
    """The one place that applies a wording. When assistant/prompts.py's
    `feedback_content(feedback_text, wording=None)` takes the wording, this becomes a call
    to it (and `Wording` moves there)."""
    if wording is None or (wording.prefix is None and not wording.suffix):
        return prompts.feedback_content(feedback_text)
    prefix = prompts.FEEDBACK_PREFIX if wording.prefix is None else wording.prefix
    return prefix + feedback_text + wording.suffix


def wordings(cfg: dict[str, Any] | None = None) -> dict[str, Wording]:
    """Every named wording of the config (default: configs/repair.yaml)."""
    cfg = repair_config() if cfg is None else cfg
    out = {DEFAULT: Wording(DEFAULT)}
    for name, spec in (cfg.get("feedback_wordings") or {}).items():
        spec = spec or {}
        prefix, suffix = spec.get("prefix"), spec.get("suffix") or ""
        if prefix is not None and not prefix.rstrip().endswith(MARKER):
            raise WordingError(f"the feedback wording {name!r} must end its prefix with {MARKER!r}")
        out[str(name)] = Wording(str(name), prefix, str(suffix))
    return out


def wording(name: str, cfg: dict[str, Any] | None = None) -> Wording:
    known = wordings(cfg)
    if name not in known:
        raise WordingError(f"unknown feedback wording {name!r}; use one of {', '.join(known)}")
    return known[name]


def reask(cfg: dict[str, Any] | None = None) -> str:
    """The blind control's feedback turn: a plain re-ask without execution feedback."""
    cfg = repair_config() if cfg is None else cfg
    text = str(cfg.get("reask") or "").strip()
    if not text:
        raise WordingError("configs/repair.yaml has no `reask:` wording for the blind control")
    return text
