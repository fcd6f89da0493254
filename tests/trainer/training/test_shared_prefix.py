"""The shared-prefix GRPO paths on the tiny model against TRL's standard path: per-token
log-probs, the loss and the LoRA gradients agree (left-padded prompts, ragged completions,
rows of a group not adjacent); completions of zero advantage cost no forward and change
neither loss nor gradients; a batch of only those trains nothing without NaN; generation with
one prefill per prompt gives the same greedy completions, and the same sampled ones for a seed.
Both loss layouts agree with TRL: each completion alone at its own length (the default) and the
group padded to its longest; the default really runs no padding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.trainer.training.tiny_grpo import tiny_trainer
from trainer.train_settings import SharedPrefixSettings
from trainer.training import shared_prefix
from trainer.training.shared_prefix import OFF, share_prefill_in_generation

ON = SharedPrefixSettings()
PADDED = SharedPrefixSettings(unpadded=False)
LOGP_TOL = 1e-4


def _checkpointing(trainer: Any) -> bool:
    return any(getattr(m, "gradient_checkpointing", False) is True for m in trainer.model.modules())


def _batch(seed: int = 1) -> dict[str, Any]:
    """Two prompts (7 and 4 tokens, left-padded) x 3 completions (ragged, right-padded), the
    rows of a group interleaved as after TRL's shuffle."""
    import torch

    g = torch.Generator().manual_seed(seed)
    long_p, short_p = torch.randint(3, 500, (7,), generator=g), torch.randint(3, 500, (4,), generator=g)
    lengths = [8, 3, 5, 1, 6, 8]
    group = [0, 1, 0, 1, 1, 0]
    prompt_ids = torch.zeros(6, 7, dtype=torch.long)
    prompt_mask = torch.zeros(6, 7, dtype=torch.long)
    completion_ids = torch.zeros(6, 8, dtype=torch.long)
    completion_mask = torch.zeros(6, 8, dtype=torch.long)
    for row, (n, k) in enumerate(zip(lengths, group)):
        p = long_p if k == 0 else short_p
        prompt_ids[row, 7 - len(p) :] = p
        prompt_mask[row, 7 - len(p) :] = 1
        completion_ids[row, :n] = torch.randint(3, 500, (n,), generator=g)
        completion_mask[row, :n] = 1
    return {
        "prompt_ids": prompt_ids,
        "prompt_mask": prompt_mask,
        "completion_ids": completion_ids,
        "completion_mask": completion_mask,
        "group": group,
    }


@pytest.fixture(autouse=True)
def shared_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The batch sizes the shared-prefix loss path ran on (so no test passes on TRL's path alone)."""
    seen: list[int] = []
    real = shared_prefix.shared_prefix_logps

    def spy(model: Any, ids: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(ids.size(0))
        return real(model, ids, *args, **kwargs)

    monkeypatch.setattr(shared_prefix, "shared_prefix_logps", spy)
    return seen


def _logps(
    trainer: Any, batch: dict[str, Any], standard: bool, entropy: bool = True, shared: SharedPrefixSettings = ON
) -> tuple[Any, Any]:
    import torch
    from trl import GRPOTrainer

    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    method = (
        GRPOTrainer._get_per_token_logps_and_entropies if standard else type(trainer)._get_per_token_logps_and_entropies
    )
    trainer.shared = shared
    logps, ent, _ = method(trainer, trainer.model, ids, mask, batch["completion_ids"].size(1), compute_entropy=entropy)
    return logps, ent


def _loss_and_grads(trainer: Any, inputs: dict[str, Any], shared: SharedPrefixSettings) -> tuple[float, dict[str, Any]]:
    trainer.shared = shared
    trainer.model.zero_grad()
    loss = trainer.compute_loss(trainer.model, inputs)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in trainer.model.named_parameters() if p.requires_grad and p.grad is not None}
    return float(loss.item()), grads


def _inputs(batch: dict[str, Any], advantages: list[float]) -> dict[str, Any]:
    import torch

    inputs = {k: v for k, v in batch.items() if k != "group"}
    inputs["advantages"] = torch.tensor(advantages)
    inputs["num_items_in_batch"] = batch["completion_mask"].sum()
    return inputs


@pytest.fixture(scope="module")
def trainer(test_config: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return tiny_trainer(test_config, tmp_path_factory.mktemp("shared-prefix"))


@pytest.mark.parametrize("layout", [ON, PADDED], ids=["unpadded", "padded"])
def test_log_probs_and_entropies_equal_trls(
    trainer: Any, shared_calls: list[int], layout: SharedPrefixSettings
) -> None:
    import torch

    batch = _batch()
    mask = batch["completion_mask"].bool()
    with torch.no_grad():
        standard, standard_ent = _logps(trainer, batch, standard=True)
        shared, shared_ent = _logps(trainer, batch, standard=False, shared=layout)
    assert standard.shape == shared.shape == mask.shape
    assert (shared[~mask] == 0).all()  # as TRL: 0 past each completion
    assert torch.allclose(shared[mask], standard[mask], atol=LOGP_TOL, rtol=0)
    assert torch.allclose(shared_ent[mask], standard_ent[mask], atol=LOGP_TOL, rtol=0)
    assert standard[mask].abs().min() > 0.1  # real log-probs, not zeros on both sides
    assert shared_calls == [6]


@pytest.mark.parametrize(("layout", "tails"), [(ON, [9, 9, 6, 4, 2, 7]), (PADDED, [9, 9, 9, 7, 7, 7])])
def test_the_completion_forwards_run_no_padding_unless_padded(
    trainer: Any, monkeypatch: pytest.MonkeyPatch, layout: SharedPrefixSettings, tails: list[int]
) -> None:
    """Tokens each completion forward runs per row (its last prompt token + completion): one row
    at a time at its own length, or the group's rows together at the longest one's."""
    import torch

    seen: list[int] = []
    real = type(trainer.model).forward

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        ids = kwargs.get("input_ids")
        if kwargs.get("fused_lm_head"):
            seen.extend([ids.size(1)] * ids.size(0))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(trainer.model), "forward", spy)
    with torch.no_grad():
        _logps(trainer, _batch(), standard=False, entropy=False, shared=layout)
    assert sorted(seen) == sorted(tails)


def test_reference_log_probs_with_the_adapter_off_equal_trls(trainer: Any, shared_calls: list[int]) -> None:
    import torch

    batch = _batch(seed=2)
    mask = batch["completion_mask"].bool()
    with torch.no_grad(), trainer.model.disable_adapter():
        standard, _ = _logps(trainer, batch, standard=True, entropy=False)
        shared, _ = _logps(trainer, batch, standard=False, entropy=False)
    with torch.no_grad():
        adapted, _ = _logps(trainer, batch, standard=False, entropy=False)
    assert torch.allclose(shared[mask], standard[mask], atol=LOGP_TOL, rtol=0)
    assert not torch.allclose(adapted[mask], shared[mask], atol=1e-3)  # the adapter was really off
    assert shared_calls == [6, 6]


@pytest.mark.parametrize(
    ("loss_type", "checkpointing", "layout"),
    [("dapo", True, ON), ("dapo", False, ON), ("grpo", True, ON), ("bnpo", True, ON), ("dapo", True, PADDED)],
)
def test_loss_and_lora_gradients_equal_trls(
    test_config: Any,
    tmp_path: Path,
    shared_calls: list[int],
    loss_type: str,
    checkpointing: bool,
    layout: SharedPrefixSettings,
) -> None:
    import torch

    trainer = tiny_trainer(test_config, tmp_path, loss_type=loss_type, gradient_checkpointing=checkpointing)
    assert _checkpointing(trainer) == checkpointing
    inputs = _inputs(_batch(), [0.5, -1.0, -0.7, 1.2, -0.2, 0.2])
    standard_loss, standard_grads = _loss_and_grads(trainer, inputs, OFF)
    shared_loss, shared_grads = _loss_and_grads(trainer, inputs, layout)
    assert standard_loss == pytest.approx(shared_loss, abs=1e-4)
    assert standard_grads.keys() == shared_grads.keys() and len(standard_grads) == 8  # A and B of q, v x 2 layers
    for name, grad in standard_grads.items():
        assert grad.abs().max() > 0
        assert torch.allclose(shared_grads[name], grad, atol=1e-5, rtol=1e-3), name
    assert shared_calls == [6]


@pytest.mark.parametrize("loss_type", ["dapo", "grpo", "bnpo", "dr_grpo"])
def test_a_zero_spread_group_is_skipped_and_changes_nothing(
    test_config: Any, tmp_path: Path, shared_calls: list[int], loss_type: str
) -> None:
    import torch

    trainer = tiny_trainer(test_config, tmp_path, loss_type=loss_type)
    batch = _batch()
    advantages = [0.0 if k == 1 else a for k, a in zip(batch["group"], [0.9, 0, -0.3, 0, 0, -0.6])]
    inputs = _inputs(batch, advantages)
    standard_loss, standard_grads = _loss_and_grads(trainer, inputs, OFF)
    trainer._metrics["train"].clear()
    shared_loss, shared_grads = _loss_and_grads(trainer, inputs, ON)
    assert shared_calls == [3]  # only the 3 rows of the group with spread were run
    assert trainer._metrics["train"]["zero_spread/groups_dropped"] == [1.0]
    assert trainer._metrics["train"]["zero_spread/rows_dropped"] == [3.0]
    assert standard_loss == pytest.approx(shared_loss, abs=1e-5)
    for name, grad in standard_grads.items():
        assert torch.allclose(shared_grads[name], grad, atol=1e-5, rtol=1e-3), name


def test_a_batch_without_spread_trains_nothing_and_gives_no_nan(trainer: Any, shared_calls: list[int]) -> None:
    inputs = _inputs(_batch(), [0.0] * 6)
    loss, grads = _loss_and_grads(trainer, inputs, ON)
    assert loss == 0.0 and grads and all(float(g.abs().max()) == 0.0 for g in grads.values())
    assert shared_calls == []  # no forward at all


def test_with_a_kl_term_zero_advantage_rows_are_kept(test_config: Any, tmp_path: Path) -> None:
    trainer = tiny_trainer(test_config, tmp_path, beta=0.1)
    inputs = _inputs(_batch(), [0.0] * 6)
    inputs["ref_per_token_logps"] = _logps(trainer, _batch(), standard=True, entropy=False)[0].detach() - 0.1
    loss, grads = _loss_and_grads(trainer, inputs, ON)
    assert loss > 0 and any(float(g.abs().max()) > 0 for g in grads.values())  # the KL term still trains


def test_generation_with_one_prefill_per_prompt_is_trls(trainer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(trainer.generation_config, "do_sample", False)
    monkeypatch.setattr(trainer.generation_config, "max_new_tokens", 12)
    monkeypatch.setattr(trainer, "eos_token_ids", [-1])  # no EOS: every row runs all 12 tokens
    prompts = [[5, 9, 11, 40, 7, 3, 88]] * 3 + [[17, 260, 31]] * 3
    standard, _ = trainer._generate_single_turn(prompts, None, {}, 3)
    calls: list[int] = []
    backbone = shared_prefix.backbone_of(trainer.model)
    hook = backbone.register_forward_hook(
        lambda m, args, kwargs, out: calls.append(kwargs["input_ids"].shape), with_kwargs=True
    )
    try:
        share_prefill_in_generation(trainer.model)
        shared, _ = trainer._generate_single_turn(prompts, None, {}, 3)
    finally:
        hook.remove()
        trainer.model.generate = trainer.model.generate.args[0]
        trainer.model._cobalt_shared_prefill = False
    assert shared == standard and len(shared[0]) == 12
    assert calls[0] == torch.Size([2, 6])  # the 2 distinct prompts, all tokens but the last
    assert calls[1] == torch.Size([6, 1])  # then each row from its last prompt token


def test_sampled_completions_with_one_prefill_per_prompt_are_trls_for_the_same_seed(
    trainer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    monkeypatch.setattr(trainer.generation_config, "max_new_tokens", 24)
    monkeypatch.setattr(trainer, "eos_token_ids", [-1])
    prompts = [[5, 9, 11, 40, 7, 3, 88]] * 4 + [[17, 260, 31]] * 4
    torch.manual_seed(3)
    standard, _ = trainer._generate_single_turn(prompts, None, {}, 4)
    share_prefill_in_generation(trainer.model)
    try:
        torch.manual_seed(3)
        shared, _ = trainer._generate_single_turn(prompts, None, {}, 4)
    finally:
        trainer.model.generate = trainer.model.generate.args[0]
        trainer.model._cobalt_shared_prefill = False
    assert shared == standard and len({tuple(c) for c in shared}) > 2  # sampled, not all alike
