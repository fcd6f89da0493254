"""The fence stop in transformers generation (GRPO completions): the tiny model is forced to
write scripted text token by token (a logits processor), and generation with the stop ends
each row at its closing fence, as the server does, leaving open answers alone."""

from __future__ import annotations

from typing import Any

import pytest

from assistant.messages import extract
from assistant.serving import models
from trainer.training.fence_stop import stop_generation_at_fence

ANSWER = "Add them.\n```python\nprint(sum(map(int, input().split())))\n```\n\nThis reads two numbers and more words"
OPEN = "Input:\n```\n1 2\n```\nThe code:\n```python\nx = '```'\nprint(x)\nprint(x)\nprint(x)\nprint(x)\n"


class Forced:
    """A LogitsProcessor that makes row i write `texts[i]` (then EOS)."""

    def __init__(self, tok: Any, texts: list[str], prompt_length: int) -> None:
        self.ids = [tok(t, add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for t in texts]
        self.prompt_length = prompt_length

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        step = input_ids.shape[1] - self.prompt_length
        forced = scores.new_full(scores.shape, float("-inf"))
        for row, ids in enumerate(self.ids):
            forced[row, ids[min(step, len(ids) - 1)]] = 0.0
        return forced


@pytest.fixture(scope="module")
def tiny(test_config: Any) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not models.is_prepared("tiny", test_config.paths):
        models.prepare("tiny", test_config.paths)
    path = models.resolve("tiny", test_config.paths)
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def _forced_generate(model: Any, tok: Any, texts: list[str], extra: int = 0) -> tuple[Any, int]:
    """Greedy generation where row i is forced to write texts[i]; budget: the longest + extra."""
    from transformers import LogitsProcessorList

    prompt = tok(["hello"] * len(texts), return_tensors="pt")
    width = prompt["input_ids"].shape[1]
    forced = Forced(tok, texts, width)
    out = model.generate(
        **prompt,
        max_new_tokens=max(len(ids) for ids in forced.ids) + extra,
        do_sample=False,
        logits_processor=LogitsProcessorList([forced]),
        pad_token_id=tok.eos_token_id,
    )
    return out, width


def test_generation_stops_each_row_at_its_closing_fence(tiny: tuple[Any, Any]) -> None:
    model, tok = tiny
    stop_generation_at_fence(model, tok)
    out, width = _forced_generate(model, tok, [ANSWER, OPEN], extra=-1)
    answer, still_open = (tok.decode(row[width:], skip_special_tokens=True) for row in out)
    assert answer.rstrip() == extract.cut_at_answer(ANSWER)  # cut at the fence (the token may carry a newline)
    assert extract.code(answer) == extract.code(ANSWER) is not None
    tail = out[0, width + len(tok(answer, add_special_tokens=False)["input_ids"]) :]
    assert tail.numel() > 0 and bool((tail == tok.eos_token_id).all())  # EOS after the stop: TRL masks it
    assert still_open.startswith(OPEN[: len(still_open)]) and len(still_open) > len(OPEN) - 8  # ran to the budget


def test_a_looping_row_stops_early_and_the_others_run_on(test_config: Any) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from assistant.messages.repetition import RepeatStop, degenerate

    path = models.resolve("tiny", test_config.paths)
    model, tok = AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    stop_generation_at_fence(model, tok, RepeatStop())
    looping = "```python\ndef f(n):\n" + "    if n % 2 == 0 or n % 2 == 1:\n        return False\n" * 30
    out, width = _forced_generate(model, tok, [looping, OPEN], extra=-1)
    stopped, still_open = (tok.decode(row[width:], skip_special_tokens=True) for row in out)
    assert degenerate(stopped) and looping.startswith(stopped) and len(stopped) < len(looping) // 2
    assert still_open.startswith(OPEN[: len(still_open)]) and len(still_open) > len(OPEN) - 8


def test_the_row_whose_stop_ends_generation_gets_an_eos(test_config: Any) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = models.resolve("tiny", test_config.paths)
    model, tok = AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    stop_generation_at_fence(model, tok)
    short = "```python\nprint(1)\n```\nand then more words that are never generated"
    out, width = _forced_generate(model, tok, [ANSWER, short])
    completions = out[:, width:]
    assert all(bool((row == tok.eos_token_id).any()) for row in completions)  # TRL sees both as terminated
    assert int(completions[0, -1]) == tok.eos_token_id and int(completions[0, -2]) != tok.eos_token_id
    answer = tok.decode(completions[0], skip_special_tokens=True)
    assert extract.code(answer) == extract.code(ANSWER) is not None


def test_training_completions_ban_the_served_models_triple_quotes(test_config: Any) -> None:
    from assistant.serving.token_bias import triple_quote_ban
    from trainer.train_settings import load_train_settings
    from trainer.training.grpo import generation_kwargs

    if not models.is_prepared("tiny", test_config.paths):
        models.prepare("tiny", test_config.paths)
    path = models.resolve("tiny", test_config.paths)
    settings = load_train_settings(None, "test")
    assert settings.suppress_docstrings  # configs/train.yaml, as model.suppress_docstrings serves
    kwargs = generation_kwargs(settings, path, {"sequence_bias": {(5,): 1.0}, "suppress_tokens": [7]})
    assert kwargs["sequence_bias"] == {(5,): 1.0}
    assert kwargs["suppress_tokens"] == sorted({7, *triple_quote_ban(str(path))})
    settings.suppress_docstrings = False
    assert generation_kwargs(settings, path, None) is None
