"""Guided groups (issue 25, `guide_anchor` in configs/train.yaml): of the G completions of a
prompt that carries a guide (the dataset's `guide` column, `trainer.data.guides`: the task's
reference program written as a served reply), the last is the guide itself, token by token, and
the other G - 1 are the policy's own.

Why: a repair of the model's own mistake can only be learnt from a group where one completion
scores above another, and own-1's sampled repairs of its greedy failures pass 2 times in 100
(docs/experiments/2026-11-28-twist-cohort.md): most groups have no
reward spread and teach nothing. With a passing program in the group, every group whose own
completions fail has spread: the guide gets a positive advantage, the failing samples (the
unchanged resubmission among them) a negative one. This is off-policy guidance inside the
group, as LUFFY (Yan et al. 2025, "Learning to Reason under Off-Policy Guidance") mixes expert
traces into GRPO groups; the reward still scores the guide in the sandbox like any completion.

How: a `LogitsProcessor` leaves only the guide's next token (then EOS) finite in the guided
rows, after transformers' own processors and before temperature and top-p, which then cannot
pick anything else; the fence stop ends the row at the guide's closing fence, as a served
reply ends. With one optimisation step per generation the importance ratio is 1, so TRL's loss
treats the guide as an ordinary completion. A group's guide is found by its prompt's text: the
real prompt tokens decoded, looked up among the dataset's chat-templated prompts. This module
changes generation only; it never runs programs.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any, Iterable, Mapping

from trainer.training.greedy_anchor import generate_with_processor
from trainer.training.shared_logps import prompt_groups


class GuideTable:
    """Prompt text (chat-templated, with the generation prompt) -> the guide's token ids.

    Guides longer than `max_tokens` (with their EOS) are left out: truncated, they would fail."""

    def __init__(self, tokenizer: Any, rows: Iterable[Mapping[str, Any]], max_tokens: int) -> None:
        self.tokenizer = tokenizer
        self.eos = int(tokenizer.eos_token_id)
        self.ids: dict[str, list[int]] = {}
        self.counts: Counter = Counter()
        for row in rows:
            guide = str(row.get("guide") or "")
            if not guide:
                continue
            text = tokenizer.apply_chat_template(list(row["prompt"]), add_generation_prompt=True, tokenize=False)
            ids = tokenizer(guide, add_special_tokens=False)["input_ids"]
            if len(ids) + 1 > max_tokens:
                self.counts["too_long"] += 1
                continue
            self.ids[text] = ids
            self.counts["guides"] += 1

    def lookup(self, prompt_ids: list[int]) -> list[int] | None:
        """The guide of the prompt with these real (unpadded) token ids, or None."""
        found = self.ids.get(self.tokenizer.decode(prompt_ids, skip_special_tokens=False))
        self.counts["groups_guided" if found else "groups_unguided"] += 1
        return found


class ForcedRows:
    """A transformers logits processor: row r emits `targets[r][t]` at its t-th generated token
    (t counted from `start`, the prompt length), then `eos`; other rows are left as they are."""

    def __init__(self, targets: Mapping[int, list[int]], start: int, eos: int) -> None:
        self.targets, self.start, self.eos = dict(targets), start, eos

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if not self.targets:
            return scores
        step = input_ids.size(1) - self.start
        scores = scores.clone()
        for row, ids in self.targets.items():
            token = ids[step] if step < len(ids) else self.eos
            kept = scores[row, token].clone()
            scores[row] = float("-inf")
            scores[row, token] = kept if bool(kept.isfinite()) else 0.0
        return scores


def guided_rows(input_ids: Any, attention_mask: Any, table: GuideTable) -> dict[int, list[int]]:
    """{last row of each group whose prompt has a guide: the guide's ids}; groups of one row
    (no group) get none, so a completion is never only the guide."""
    firsts, group_of = prompt_groups(input_ids, attention_mask)
    last = {g: r for r, g in enumerate(group_of)}
    out: dict[int, list[int]] = {}
    for group, first in enumerate(firsts):
        if last[group] == first:
            continue
        real = [t for t, m in zip(input_ids[first].tolist(), attention_mask[first].tolist()) if m]
        ids = table.lookup(real)
        if ids:
            out[last[group]] = ids
    return out


def generate_with_guides(generate: Any, table: GuideTable, *args: Any, **kwargs: Any) -> Any:
    """Call `generate` with the last row of each guided group forced to its guide; calls that do
    not sample, or have no guided group, go through unchanged."""

    def forced(input_ids: Any, mask: Any) -> ForcedRows | None:
        targets = guided_rows(input_ids, mask, table)
        return ForcedRows(targets, input_ids.size(1), table.eos) if targets else None

    return generate_with_processor(generate, forced, *args, **kwargs)


def guide_in_generation(model: Any, table: GuideTable) -> Any:
    """Make `model.generate` force each guided group's last completion (returns the model).
    Install it before `fence_stop.stop_generation_at_fence`, which then wraps it."""
    if getattr(model, "_cobalt_guides", None) is None:
        model.generate = functools.partial(generate_with_guides, model.generate, table)
    model._cobalt_guides = table
    return model
