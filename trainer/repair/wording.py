"""The words of the repair benchmark's feedback turn (issue 12 item 4): which named feedback
wording of configs/prompts.yaml a run uses (`wording`, validated through
`assistant.loop.prompts`), the blind control's re-ask (`reask:` of configs/repair.yaml), and
configs/repair.yaml itself (`repair_config`).

The wordings themselves live with the other prompt words in configs/prompts.yaml, so the
loop, the dataset builder and serving use the same text as the benchmark when
`loop.feedback_wording` names it. This module formats text only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assistant.loop import prompts
from assistant.settings_loader import REPO_CONFIGS, merge, read_yaml

WordingError = prompts.PromptError


def repair_config(overrides: dict[str, Any] | None = None, path: Path | None = None) -> dict[str, Any]:
    """configs/repair.yaml (or `path`), with `overrides` deep-merged over it."""
    return merge(read_yaml(path or REPO_CONFIGS / "repair.yaml"), overrides or {})


def wordings() -> list[str]:
    """The names of every feedback wording (configs/prompts.yaml `feedback_wordings:`)."""
    return list(prompts.feedback_wordings())


def wording(name: str) -> prompts.PromptStyle:
    """The default answer format with the feedback wording `name`; WordingError (one
    sentence) for an unknown name."""
    return prompts.style(feedback_wording=name)


def reask(cfg: dict[str, Any] | None = None) -> str:
    """The blind control's feedback turn: a plain re-ask without execution feedback."""
    cfg = repair_config() if cfg is None else cfg
    text = str(cfg.get("reask") or "").strip()
    if not text:
        raise WordingError("configs/repair.yaml has no `reask:` wording for the blind control")
    return text
