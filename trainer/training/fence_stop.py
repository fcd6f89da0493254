"""The fence stop for transformers generation (GRPO completions, rollouts): the same rule as
serving (`assistant.messages.extract.answer_end`), so a training completion ends where a served reply
ends, at the closing fence of its python block.

`FenceStop` is a `StoppingCriteria`; `stop_generation_at_fence(model, tokenizer)` makes a
model's `generate` use it (TRL's GRPOTrainer calls `generate` with a GenerationConfig only,
and GenerationConfig's `stop_strings` would also stop at an *opening* fence and needs a
tokenizer TRL does not pass). Positions after a stopped row become EOS, so TRL's completion
mask ends there, as the server's reply does. With a `RepeatStop` a row whose tail has fallen
into a loop (`assistant.messages.repetition`, as served replies: model.stop_on_repetition) stops too,
so one looping row does not keep a whole batch generating to max_completion_length; the
reward still scores it malformed. This module does not score or train.
"""

from __future__ import annotations

import functools
from typing import Any

from assistant.messages.extract import answer_end
from assistant.messages.repetition import RepeatStop

CHECK_EVERY_TOKENS = 16  # repetition checks per row: once every this many generated tokens
TAIL_TOKENS = 1024  # decoded for a repetition check (RepeatStop.window characters are checked)


class FenceStop:
    """Stops each row whose generated text (after `prompt_length`) holds a complete answer."""

    def __init__(self, tokenizer: Any, prompt_length: int, repeat: RepeatStop | None = None) -> None:
        self.tokenizer, self.prompt_length, self.repeat = tokenizer, prompt_length, repeat
        self.stopped_at: dict[int, int] = {}  # row -> sequence length when it stopped
        self.looped: set[int] = set()  # rows stopped by the repetition check

    def __call__(self, input_ids: Any, scores: Any = None, **_: Any) -> Any:
        import torch

        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        for row in range(input_ids.shape[0]):
            if row in self.stopped_at:
                done[row] = True
                continue
            if self._looping(input_ids, row) or self._answered(input_ids, row):
                self.stopped_at[row] = int(input_ids.shape[1])
                done[row] = True
        return done

    def _answered(self, input_ids: Any, row: int) -> bool:
        if "`" not in self.tokenizer.decode(input_ids[row, -1:]):
            return False  # a closing fence ends with a backtick
        text = self.tokenizer.decode(input_ids[row, self.prompt_length :], skip_special_tokens=True)
        return answer_end(text) is not None

    def _looping(self, input_ids: Any, row: int) -> bool:
        generated = int(input_ids.shape[1]) - self.prompt_length
        if self.repeat is None or generated == 0 or generated % CHECK_EVERY_TOKENS:
            return False
        start = max(self.prompt_length, int(input_ids.shape[1]) - TAIL_TOKENS)
        if not self.repeat.looping(self.tokenizer.decode(input_ids[row, start:], skip_special_tokens=True)):
            return False
        self.looped.add(row)
        return True


def generate_with_fence_stop(
    generate: Any, tokenizer: Any, *args: Any, repeat: RepeatStop | None = None, **kwargs: Any
) -> Any:
    """Call `generate` with a FenceStop added; stopped rows are EOS after their stop."""
    from transformers import StoppingCriteriaList

    input_ids = kwargs.get("input_ids", args[0] if args else None)
    stop = FenceStop(tokenizer, int(input_ids.shape[1]), repeat)
    criteria = StoppingCriteriaList(list(kwargs.pop("stopping_criteria", None) or []) + [stop])
    output = generate(*args, stopping_criteria=criteria, **kwargs)
    sequences = output if hasattr(output, "shape") else output.sequences
    eos = tokenizer.eos_token_id
    if eos is None:
        return output
    for row, length in stop.stopped_at.items():
        if length < sequences.shape[1]:
            sequences[row, length:] = eos
    ended = _with_final_eos(sequences, stop, eos)
    if ended is sequences:
        return output
    if hasattr(output, "shape"):
        return ended
    output.sequences = ended
    return output


def _with_final_eos(sequences: Any, stop: FenceStop, eos: int) -> Any:
    """The row(s) whose stop ended generation have no EOS yet, so TRL would count them as
    truncated (`completions/clipped_ratio`, `mask_truncated_completions`): when every row has
    ended (an EOS or a stop), one EOS column is appended; every other row has ended before it,
    so the column lies past its completion mask. Rows cut by max_new_tokens keep no EOS."""
    import torch

    width = sequences.shape[1]
    if not any(length >= width for length in stop.stopped_at.values()):
        return sequences
    completions = sequences[:, stop.prompt_length :]
    for row in range(sequences.shape[0]):
        if row not in stop.stopped_at and not bool((completions[row] == eos).any()):
            return sequences  # a row ran to max_new_tokens: its completion must stay unterminated
    return torch.cat([sequences, sequences.new_full((sequences.shape[0], 1), eos)], dim=1)


def stop_generation_at_fence(model: Any, tokenizer: Any, repeat: RepeatStop | None = None) -> Any:
    """Make `model.generate` stop each row at its closing fence, or once it loops when
    `repeat` is given (returns the model)."""
    if not getattr(model, "_cobalt_fence_stop", False):
        model.generate = functools.partial(generate_with_fence_stop, model.generate, tokenizer, repeat=repeat)
        model._cobalt_fence_stop = True
    return model
