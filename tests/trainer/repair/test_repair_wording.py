"""Feedback-turn wordings of the repair benchmark: the names come from configs/prompts.yaml
(the loop's own words), unknown names are refused with one sentence, and the blind re-ask
carries no feedback."""

from __future__ import annotations

import pytest

from assistant.loop import prompts
from trainer.repair.repair_settings import RepairSettings, repair_settings
from trainer.repair.wording import WordingError, reask, wording, wordings

FEEDBACK = "Input:\nadd(1, 2)\nProgram's Output:\n-1\nExpected Output:\n3"


def test_wordings_are_the_loops_and_all_keep_the_feedback() -> None:
    assert wording(prompts.DEFAULT_FEEDBACK_WORDING).feedback_content(FEEDBACK) == prompts.style().feedback_content(
        FEEDBACK
    )
    found = wordings()
    assert {"default", "code_first", "brief", "instruction_last"} <= set(found)
    for name in found:
        text = wording(name).feedback_content(FEEDBACK)
        assert FEEDBACK in text and prompts.feedback_of(text) == FEEDBACK
    assert FEEDBACK not in reask() and "python" in reask()


def test_bad_wordings_are_refused() -> None:
    with pytest.raises(WordingError, match="unknown feedback wording 'nope'; use one of default"):
        wording("nope")
    with pytest.raises(WordingError, match="no `reask:` wording"):
        reask(repair_settings().merged({"reask": ""}))


def test_repair_yaml_is_read_once_into_typed_settings() -> None:
    settings = repair_settings()
    assert settings is repair_settings()  # read once per process
    assert settings == RepairSettings(reask=settings.reask)  # the class defaults are the shipped file's
    assert settings.merged({"benchmark": {"temperature": 0.5}}).benchmark.temperature == 0.5
    with pytest.raises(ValueError, match="temperatur"):
        settings.merged({"benchmark": {"temperatur": 0.5}})
