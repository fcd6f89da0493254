"""The words of the repair benchmark's feedback turn (issue 12 item 4): which named feedback
wording of configs/prompts.yaml a run uses (`wording`, validated through
`assistant.loop.prompts`), and the blind control's re-ask (`reask:` of configs/repair.yaml,
`trainer.repair.repair_settings`).

The wordings themselves live with the other prompt words in configs/prompts.yaml, so the
loop, the dataset builder and serving use the same text as the benchmark when
`loop.feedback_wording` names it. This module formats text only.
"""

from __future__ import annotations

from assistant.loop import prompts
from trainer.repair.repair_settings import RepairSettings, repair_settings

WordingError = prompts.PromptError


def wordings() -> list[str]:
    """The names of every feedback wording (configs/prompts.yaml `feedback_wordings:`)."""
    return list(prompts.feedback_wordings())


def wording(name: str) -> prompts.PromptStyle:
    """The default answer format with the feedback wording `name`; WordingError (one
    sentence) for an unknown name."""
    return prompts.style(feedback_wording=name)


def reask(settings: RepairSettings | None = None) -> str:
    """The blind control's feedback turn: a plain re-ask without execution feedback
    (`settings`: configs/repair.yaml as read, default: `repair_settings()`)."""
    text = (settings or repair_settings()).reask.strip()
    if not text:
        raise WordingError("configs/repair.yaml has no `reask:` wording for the blind control")
    return text
