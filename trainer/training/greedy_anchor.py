"""Greedy-anchored groups (issue 25, `greedy_anchor` in configs/train.yaml): of the G
completions of each prompt, the first is decoded greedily and the other G - 1 are sampled.

Why: the served model is evaluated (and mostly used) greedy, and on a failed attempt its greedy
reply is most often the same wrong program again; sampled at temperature 1.0 that exact reply
is rare (10 of 320 completions in own-4's run), so a reward that penalises it almost never
sees it. With the greedy reply in every group, its reward is compared with the sampled ones:
when a sample fixes the program, or the greedy reply resubmits it unchanged, the greedy reply
gets a negative advantage and the step moves the greedy choice itself.

How: a `LogitsProcessor` keeps only the arg-max token of the anchor rows (every other score
-inf), after transformers' own processors (`suppress_tokens` etc.) and before temperature and
top-p, which then cannot pick anything else. The anchor of a group is its first row
(`shared_logps.prompt_groups`: rows with the same real prompt tokens). The completions are
otherwise ordinary samples for TRL's loss: with one optimisation step per generation the
importance ratio is 1 whatever the row's sampling distribution was.
"""

from __future__ import annotations

import functools
from typing import Any

from trainer.training.shared_logps import prompt_groups


def anchor_rows(input_ids: Any, attention_mask: Any) -> list[int]:
    """The first row of each group of rows with the same prompt, when some prompt repeats
    (a batch without groups has no anchor)."""
    firsts, _ = prompt_groups(input_ids, attention_mask)
    return firsts if len(firsts) < input_ids.size(0) else []


class GreedyRows:
    """A transformers logits processor (any callable `(input_ids, scores) -> scores` is one):
    in `rows`, every score but the row's maximum is -inf."""

    def __init__(self, rows: list[int]) -> None:
        self.rows = rows

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if not self.rows:
            return scores
        index = torch.tensor(self.rows, dtype=torch.long, device=scores.device)
        picked = scores.index_select(0, index)
        top = picked.argmax(dim=-1, keepdim=True)
        kept = torch.full_like(picked, float("-inf")).scatter(1, top, picked.gather(1, top))
        return scores.index_copy(0, index, kept)


def generate_with_processor(generate: Any, processor_for: Any, *args: Any, **kwargs: Any) -> Any:
    """Call `generate` with one more logits processor, `processor_for(input_ids, attention_mask)`,
    after the call's own; calls that do not sample, or for which it gives None, go through
    unchanged. The shared entry of greedy anchors and guides (`guide_anchor`)."""
    from transformers import LogitsProcessorList

    input_ids, mask = kwargs.get("input_ids"), kwargs.get("attention_mask")
    config = kwargs.get("generation_config")
    sampling = kwargs.get("do_sample", getattr(config, "do_sample", False))
    if args or input_ids is None or mask is None or not sampling:
        return generate(*args, **kwargs)
    extra = processor_for(input_ids, mask)
    if extra is None:
        return generate(**kwargs)
    processors = LogitsProcessorList([*(kwargs.pop("logits_processor", None) or []), extra])
    return generate(logits_processor=processors, **kwargs)


def _greedy_processor(input_ids: Any, mask: Any) -> GreedyRows | None:
    rows = anchor_rows(input_ids, mask)
    return GreedyRows(rows) if rows else None


def generate_with_greedy_anchor(generate: Any, *args: Any, **kwargs: Any) -> Any:
    """Call `generate` with the first row of each prompt's group decoded greedily; calls that
    do not sample, or have no repeated prompt, go through unchanged."""
    return generate_with_processor(generate, _greedy_processor, *args, **kwargs)


def anchor_greedy_in_generation(model: Any) -> Any:
    """Make `model.generate` decode each group's first completion greedily (returns the
    model). Install it before `fence_stop.stop_generation_at_fence`, which then wraps it."""
    if not getattr(model, "_cobalt_greedy_anchor", False):
        model.generate = functools.partial(generate_with_greedy_anchor, model.generate)
        model._cobalt_greedy_anchor = True
    return model
