"""Greedy-anchored groups on the tiny model: the first completion of each prompt's group is
exactly the greedy one (with and without one prefill per prompt, as training installs them),
the other completions are still sampled, a call without groups or sampling is untouched, and
the reward's anchor counts read the groups right."""

from __future__ import annotations

from typing import Any

import pytest

from tests.trainer.training.grouped_generation import generate_groups
from trainer.training import greedy_anchor
from trainer.training.reward import anchor_counts


@pytest.fixture
def trainer(generating_trainer: Any) -> Any:
    return generating_trainer


def _generate(trainer: Any, *, anchor: bool, prefill: bool, greedy: bool = False, seed: int = 3) -> list[list[int]]:
    install = greedy_anchor.anchor_greedy_in_generation if anchor else None
    return generate_groups(trainer, install, prefill=prefill, greedy=greedy, seed=seed)


@pytest.mark.parametrize("prefill", [False, True])
def test_the_first_completion_of_each_group_is_the_greedy_one(trainer: Any, no_eos: None, prefill: bool) -> None:
    greedy = _generate(trainer, anchor=False, prefill=False, greedy=True)
    anchored = _generate(trainer, anchor=True, prefill=prefill)
    assert anchored[0] == greedy[0] and anchored[4] == greedy[4]
    sampled = [tuple(c) for i, c in enumerate(anchored) if i not in (0, 4)]
    assert len(set(sampled)) > 2 and tuple(greedy[0]) not in sampled  # the others still sampled


def test_without_anchoring_no_completion_is_forced_greedy(trainer: Any, no_eos: None) -> None:
    greedy = _generate(trainer, anchor=False, prefill=False, greedy=True)
    plain = _generate(trainer, anchor=False, prefill=False)
    assert plain[0] != greedy[0] and plain[4] != greedy[4]  # the test above cannot pass by chance


def test_a_greedy_call_or_one_without_groups_is_untouched(trainer: Any, no_eos: None) -> None:
    import torch

    assert greedy_anchor.anchor_rows(torch.tensor([[1, 2], [3, 4]]), torch.ones(2, 2)) == []
    padded = torch.tensor([[0, 2, 3], [9, 2, 3], [2, 3, 4]])  # rows 0 and 1: the same prompt, left-padded
    assert greedy_anchor.anchor_rows(padded, torch.tensor([[0, 1, 1], [0, 1, 1], [1, 1, 1]])) == [0, 2]
    ids = torch.tensor([[1, 2], [1, 2], [5, 2]])
    assert greedy_anchor.anchor_rows(ids, torch.ones(3, 2)) == [0, 2]
    assert _generate(trainer, anchor=True, prefill=False, greedy=True) == _generate(
        trainer, anchor=False, prefill=False, greedy=True
    )


def test_the_processor_keeps_only_each_anchor_rows_best_score() -> None:
    import torch

    scores = torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.0, 1.0], [0.5, 0.25, 0.75]])
    out = greedy_anchor.GreedyRows([0, 2])(None, scores.clone())
    inf = float("-inf")
    assert out.tolist() == [[inf, 2.0, inf], [3.0, 0.0, 1.0], [inf, inf, 0.75]]


def test_anchor_counts_read_each_prompts_first_completion() -> None:
    prompts = ["p", "p", "p", "q", "q", "q"]
    rewards = [-0.3, 1.0, -0.1, 1.0, 1.0, None]
    counts = anchor_counts(prompts, rewards, unchanged={0}, solved={1, 3, 4})
    assert counts == {"anchors": 2, "anchor_unchanged": 1, "anchor_solved": 1, "anchor_beaten": 1}
