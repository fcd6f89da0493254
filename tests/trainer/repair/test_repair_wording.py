"""Feedback-turn wordings: `default` is exactly the loop's own turn, every configured
wording keeps the feedback text recoverable (`prompts.feedback_of`), bad or unknown
wordings are refused with one sentence, and the blind re-ask carries no feedback."""

from __future__ import annotations

import pytest

from assistant import prompts
from trainer.repair.wording import WordingError, reask, repair_config, wording, wordings

FEEDBACK = "Input:\nadd(1, 2)\nProgram's Output:\n-1\nExpected Output:\n3"


def test_default_is_the_loops_turn_and_all_keep_the_feedback() -> None:
    assert wording("default").content(FEEDBACK) == prompts.feedback_content(FEEDBACK)
    found = wordings()
    assert {"default", "code_first", "brief", "instruction_last"} <= set(found)
    for w in found.values():
        text = w.content(FEEDBACK)
        assert FEEDBACK in text and prompts.feedback_of(text).startswith(FEEDBACK)
    assert FEEDBACK not in reask() and "python" in reask()


def test_bad_wordings_are_refused() -> None:
    with pytest.raises(WordingError, match="unknown feedback wording 'nope'; use one of default"):
        wording("nope")
    bad = repair_config({"feedback_wordings": {"odd": {"prefix": "Fix it."}}})
    with pytest.raises(WordingError, match="must end its prefix with 'Here is the execution feedback:'"):
        wordings(bad)
    with pytest.raises(WordingError, match="no `reask:` wording"):
        reask(repair_config({"reask": ""}))
