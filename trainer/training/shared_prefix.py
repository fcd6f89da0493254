"""Faster GRPO steps, same objective (issue 25): the G completions of a prompt share its
forward passes, and completions with zero advantage spend no loss forward or backward.

- Loss (`shared_prefix_logps`, trainer/training/shared_logps.py): one forward of each distinct
  prompt, shared by its G completions, each completion at its own length; the log-probs equal
  TRL's. Used for the policy, old and reference log-probs.
- Generation (`generate_with_shared_prefill`): rows of a `generate` call with the same prompt
  are prefilled once (all tokens but the last), the cache is repeated to every row, and
  `generate` continues from it: same ordering, sampling settings and hooks (the fence stop
  wraps this; `suppress_tokens` etc. stay in the generation config).
- Zero spread (`SharedPrefixMixin._compute_loss`): rows whose advantage is exactly 0 have a
  gradient of exactly 0 when beta is 0 (no KL term), no entropy bonus or entropy quantile mask,
  no aux loss; they are left out of the loss batch and the loss is rescaled to TRL's
  normalisation, so loss and gradient are unchanged (the logged entropy and clip ratios are
  then those of the kept rows). A batch with nothing left gives a zero loss joined to the
  trainable weights (zero gradients, as TRL's path gives). Rows and groups left out per step go
  into the metrics (`zero_spread/*`).
- Timing: each optimizer step's wall seconds in generation, reward, no-grad log-probs (old and
  reference), preparing the batch (all of those), loss forward and backward, and the whole
  training step (the optimizer's update aside) go into the logged metrics (`time/*_s`, so
  metrics.jsonl).

`trainer_class()` is TRL's `GRPOTrainer` with the mixin; with every switch off
(`configs/train.yaml` `shared_prefix:`) it is TRL's path plus the timers. The loss path needs
one process (under DDP it takes TRL's path), non-reentrant gradient checkpointing or none
(TRL's default is non-reentrant), full-attention text models.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections import defaultdict
from typing import Any, Iterator

from trainer.train_settings import SharedPrefixSettings
from trainer.training.shared_logps import backbone_of, prompt_groups, shared_prefix_logps

OFF = SharedPrefixSettings(loss=False, generation=False, skip_zero_spread=False)
# loss types whose per-token loss is 0 where the advantage is 0, and how each normalises
_ROW_MEAN = {"grpo", "sapo", "luspo", "dr_grpo"}  # the loss is a mean (or sum / B) over rows
_TOKEN_MEAN = {"bnpo"}  # the loss is a mean over the batch's tokens
_FIXED = {"dapo", "cispo", "vespo"}  # the loss is divided by num_items_in_batch (given)
_ROW_TENSORS = (
    "prompt_ids",
    "prompt_mask",
    "completion_ids",
    "completion_mask",
    "advantages",
    "old_per_token_logps",
    "ref_per_token_logps",
    "sampling_per_token_logps",
    "importance_sampling_ratio",
    "tool_mask",
)


def generate_with_shared_prefill(generate: Any, model: Any, *args: Any, **kwargs: Any) -> Any:
    """Call `generate` with the rows' common prompts prefilled once: the unique prompts (all
    tokens but the last, left padding kept, positions as `generate` counts them) run once, the
    cache is repeated to every row, and `generate` continues from it (its first forward is the
    last prompt token of each row). Calls without repeated prompts go through unchanged."""
    import torch

    input_ids, mask = kwargs.get("input_ids"), kwargs.get("attention_mask")
    config = kwargs.get("generation_config")
    if args or input_ids is None or mask is None or kwargs.get("past_key_values") is not None:
        return generate(*args, **kwargs)
    if getattr(config, "cache_implementation", None) or (getattr(config, "num_beams", None) or 1) != 1:
        return generate(**kwargs)  # a cache of its own kind, or beams
    if input_ids.size(1) < 2:
        return generate(**kwargs)
    firsts, group_of = prompt_groups(input_ids, mask)
    if len(firsts) == input_ids.size(0):
        return generate(**kwargs)
    ids, head = input_ids[firsts, :-1], mask[firsts, :-1]
    positions = (head.long().cumsum(-1) - 1).masked_fill(head == 0, 0)
    with torch.no_grad():
        cache = backbone_of(model)(input_ids=ids, attention_mask=head, position_ids=positions, use_cache=True)
    past = cache.past_key_values
    past.reorder_cache(torch.tensor(group_of, dtype=torch.long, device=input_ids.device))
    return generate(past_key_values=past, **kwargs)


def share_prefill_in_generation(model: Any) -> Any:
    """Make `model.generate` prefill each distinct prompt once (returns the model). Install it
    before `fence_stop.stop_generation_at_fence`, which then wraps it."""
    if not getattr(model, "_cobalt_shared_prefill", False):
        model.generate = functools.partial(generate_with_shared_prefill, model.generate, model)
        model._cobalt_shared_prefill = True
    return model


class SharedPrefixMixin:
    """Overrides of TRL's GRPOTrainer (see the module docstring); `shared` holds the switches."""

    shared: SharedPrefixSettings = OFF

    # -- timers ------------------------------------------------------------------------------
    def _timed(self, name: str, started: float) -> None:
        if not hasattr(self, "_cobalt_times"):
            self._cobalt_times: dict[str, float] = defaultdict(float)
        self._cobalt_times[name] += time.perf_counter() - started

    @contextlib.contextmanager
    def _timing(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self._timed(name, started)

    def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> Any:
        started = time.perf_counter()
        before = dict(getattr(self, "_cobalt_times", {}))
        out = super().training_step(model, inputs, num_items_in_batch)  # type: ignore[misc]
        self._timed("step", started)
        times = self._cobalt_times
        spent = {k: times.get(k, 0.0) - before.get(k, 0.0) for k in ("prepare", "loss_forward")}
        times["loss_backward"] += max(0.0, time.perf_counter() - started - sum(spent.values()))
        if self._step % self.current_gradient_accumulation_steps == 0:  # type: ignore[attr-defined]
            for key in ("generate", "reward", "logps_no_grad", "prepare", "loss_forward", "loss_backward", "step"):
                self._metrics["train"][f"time/{key}_s"].append(round(times.get(key, 0.0), 3))  # type: ignore[attr-defined]
            times.clear()
        return out

    def _prepare_inputs(self, generation_batch: Any) -> Any:
        started = time.perf_counter()
        try:
            return super()._prepare_inputs(generation_batch)  # type: ignore[misc]
        finally:
            if self.model.training:  # type: ignore[attr-defined]
                self._timed("prepare", started)

    def _generate_single_turn(self, *args: Any, **kwargs: Any) -> Any:
        with self._timing("generate"):
            return super()._generate_single_turn(*args, **kwargs)  # type: ignore[misc]

    def _calculate_rewards(self, *args: Any, **kwargs: Any) -> Any:
        with self._timing("reward"):
            return super()._calculate_rewards(*args, **kwargs)  # type: ignore[misc]

    # -- loss path ---------------------------------------------------------------------------
    def _shared_loss_applies(self, input_ids: Any, logits_to_keep: int, extra: dict[str, Any]) -> bool:
        args = self.args  # type: ignore[attr-defined]
        reentrant = args.gradient_checkpointing and (args.gradient_checkpointing_kwargs or {}).get("use_reentrant")
        config = self.model.config  # type: ignore[attr-defined]
        return (
            self.shared.loss
            and all(v is None for v in extra.values())
            and self.accelerator.num_processes == 1  # type: ignore[attr-defined]
            and not reentrant  # a reentrant checkpoint would not pass gradients into the shared prefix
            and all(t == "full_attention" for t in getattr(config, "layer_types", None) or ["full_attention"])
            and input_ids.size(1) > logits_to_keep
        )

    def _get_per_token_logps_and_entropies(
        self,
        model: Any,
        input_ids: Any,
        attention_mask: Any,
        logits_to_keep: int,
        batch_size: int | None = None,
        compute_entropy: bool = False,
        compute_aux_loss: bool = False,
        **extra: Any,
    ) -> tuple[Any, Any, Any]:
        import torch

        started = time.perf_counter()
        try:
            if compute_aux_loss or not self._shared_loss_applies(input_ids, logits_to_keep, extra):
                return super()._get_per_token_logps_and_entropies(  # type: ignore[misc]
                    model,
                    input_ids,
                    attention_mask,
                    logits_to_keep,
                    batch_size=batch_size,
                    compute_entropy=compute_entropy,
                    compute_aux_loss=compute_aux_loss,
                    **extra,
                )
            with self.accelerator.autocast():  # type: ignore[attr-defined]
                logps, entropy = shared_prefix_logps(
                    model, input_ids, attention_mask, logits_to_keep, compute_entropy, self.shared.unpadded
                )
            return logps, entropy, None
        finally:
            if not torch.is_grad_enabled():
                self._timed("logps_no_grad", started)

    def compute_loss(
        self, model: Any, inputs: Any, return_outputs: bool = False, num_items_in_batch: Any = None
    ) -> Any:
        started = time.perf_counter()
        try:
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)  # type: ignore[misc]
        finally:
            self._timed("loss_forward", started)

    # -- zero-spread rows --------------------------------------------------------------------
    def _zero_advantage_is_no_gradient(self, inputs: Any) -> bool:
        """Whether rows of advantage 0 add exactly nothing to the loss's gradient here."""
        return (
            self.shared.skip_zero_spread
            and self.beta == 0.0  # type: ignore[attr-defined]
            and not getattr(self, "_entropy_bonus_enabled", False)
            and getattr(self, "top_entropy_quantile", 1.0) >= 1.0
            and not getattr(self, "aux_loss_enabled", False)
            and self.loss_type in _ROW_MEAN | _TOKEN_MEAN | _FIXED  # type: ignore[attr-defined]
            and inputs["advantages"].dim() == 1
        )

    def _compute_loss(self, model: Any, inputs: Any) -> Any:
        if not self._zero_advantage_is_no_gradient(inputs):
            return super()._compute_loss(model, inputs)  # type: ignore[misc]
        advantages = inputs["advantages"]
        keep = advantages != 0
        mode = "train" if self.model.training else "eval"  # type: ignore[attr-defined]
        _, group_of = prompt_groups(inputs["prompt_ids"], inputs["prompt_mask"])
        kept_groups = {g for g, k in zip(group_of, keep.tolist()) if k}
        metrics = self._metrics[mode]  # type: ignore[attr-defined]
        metrics["zero_spread/rows_dropped"].append(float((~keep).sum().item()))
        metrics["zero_spread/groups_dropped"].append(float(len(set(group_of)) - len(kept_groups)))
        if bool(keep.all()):
            return super()._compute_loss(model, inputs)  # type: ignore[misc]
        if not bool(keep.any()):
            trainable = [p for p in model.parameters() if p.requires_grad]
            return sum(p.sum() for p in trainable) * 0.0  # zero gradients, no forward
        sub = dict(inputs)
        for key in _ROW_TENSORS:
            if sub.get(key) is not None:
                sub[key] = sub[key][keep]
        loss = super()._compute_loss(model, sub)  # type: ignore[misc]
        return loss * self._kept_share(inputs, keep)

    def _kept_share(self, inputs: Any, keep: Any) -> float:
        """What the loss of the kept rows is multiplied by to be TRL's loss of all rows."""
        loss_type = self.loss_type  # type: ignore[attr-defined]
        if loss_type in _ROW_MEAN:
            return float(keep.sum().item()) / keep.numel()
        if loss_type in _TOKEN_MEAN:
            mask = inputs["completion_mask"]
            if inputs.get("tool_mask") is not None:
                mask = mask * inputs["tool_mask"]
            return max(float(mask[keep].sum().item()), 1.0) / max(float(mask.sum().item()), 1.0)
        return 1.0


@functools.cache
def trainer_class() -> type:
    """TRL's GRPOTrainer with `SharedPrefixMixin` (made on first use: TRL is imported lazily)."""
    from trl import GRPOTrainer

    return type("SharedPrefixGRPOTrainer", (SharedPrefixMixin, GRPOTrainer), {})
