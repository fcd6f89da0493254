"""Grouped generation on the tiny model for the greedy- and guide-anchor tests: two prompts of
four completions each through TRL's single-turn generation, with the model's generate wrapped
as a test asks (one prefill per prompt, an anchor), then restored."""

from __future__ import annotations

from typing import Any, Callable

from trainer.training.shared_prefix import share_prefill_in_generation

PROMPTS = [[5, 9, 11, 40, 7, 3, 88]] * 4 + [[17, 260, 31]] * 4
GROUP = 4


def generate_groups(
    trainer: Any, install: Callable[[Any], None] | None, *, prefill: bool, greedy: bool = False, seed: int = 3
) -> list[list[int]]:
    """The completions of PROMPTS, sampled after seeding torch with `seed` (or greedy): with one
    prefill per prompt when `prefill`, then with `install(model)` (an anchor wrapping generate)
    when given. The model's generate, its wrappers' markers and the sampling switch are restored."""
    import torch

    original, config = trainer.model.generate, trainer.generation_config
    sampling = config.do_sample
    try:
        config.do_sample = not greedy
        if prefill:
            share_prefill_in_generation(trainer.model)
        if install is not None:
            install(trainer.model)
        torch.manual_seed(seed)
        completions, _ = trainer._generate_single_turn(PROMPTS, None, {}, GROUP)
        return completions
    finally:
        config.do_sample = sampling
        trainer.model.generate = original
        trainer.model._cobalt_shared_prefill = trainer.model._cobalt_greedy_anchor = False
        trainer.model._cobalt_guides = None
