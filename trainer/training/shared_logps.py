"""The shared-prefix step's per-token log-probs (`trainer.training.shared_prefix` uses them in
the loss).

For each group of rows with the same prompt, one forward of
the prompt's real tokens but the last (batch 1, with gradients when the caller has them);
its keys and values are expanded to the G rows (so the gradients of all G completions flow
back into that one prompt forward, also under gradient checkpointing), then the G rows run
[last prompt token, completion] on that cache through TRL's fused LM head, so the logit of
completion token 0 comes from the prompt's last position as in TRL's path. With `unpadded`
(the default) each completion runs alone on the shared cache, cut at its own last token,
instead of the group padded to its longest: completions of one group often differ 2-3x in
length, and the padding's forward and backward were work thrown away. Used for the
policy, old and reference log-probs (TRL calls the same method for all three). Positions are
those of the real tokens (left padding stripped, as in generation), so the log-probs equal
TRL's, whose positions count the padding, up to RoPE rounding (tests: 1e-4).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Iterator


def prompt_groups(prompt_ids: Any, prompt_mask: Any) -> tuple[list[int], list[int]]:
    """The first row of each distinct prompt (its real tokens) and each row's group index."""
    firsts: list[int] = []
    group_of: list[int] = []
    seen: dict[tuple[int, ...], int] = {}
    for row, (ids, mask) in enumerate(zip(prompt_ids.tolist(), prompt_mask.tolist())):
        key = tuple(t for t, m in zip(ids, mask) if m)
        if key not in seen:
            seen[key] = len(firsts)
            firsts.append(row)
        group_of.append(seen[key])
    return firsts, group_of


def backbone_of(model: Any) -> Any:
    """The transformer under the LM head (through a PEFT wrapper; LoRA layers live inside it)."""
    causal = model.get_base_model() if hasattr(model, "get_base_model") else model
    return causal.base_model


@functools.cache
def _layer_classes() -> tuple[type, type]:
    """Two cache layers whose `update` gives the same result when called again, so they stay
    right under gradient checkpointing, whose backward replays each decoder layer: one that
    records the keys/values of the prompt forward (overwriting), one that reads a fixed prefix
    and returns prefix + new keys/values without storing them."""
    import torch
    from transformers.cache_utils import DynamicLayer

    class RecordingLayer(DynamicLayer):
        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            self.keys, self.values = key_states, value_states
            return key_states, value_states

    class PrefixLayer(DynamicLayer):
        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            return torch.cat([self.keys, key_states], dim=-2), torch.cat([self.values, value_states], dim=-2)

    return RecordingLayer, PrefixLayer


@contextlib.contextmanager
def _cache_kept_under_checkpointing(backbone: Any) -> Iterator[None]:
    """Let checkpointed decoder layers keep the cache (transformers drops it otherwise): safe
    with `_layer_classes`' layers, whose updates a replay repeats exactly."""
    from transformers.modeling_layers import GradientCheckpointingLayer

    layers = [m for m in backbone.modules() if isinstance(m, GradientCheckpointingLayer)]
    before = [vars(m).get("_can_checkpoint_with_cache") for m in layers]
    for m in layers:
        m._can_checkpoint_with_cache = True
    try:
        yield
    finally:
        for m, value in zip(layers, before):
            if value is None:
                del m._can_checkpoint_with_cache
            else:
                m._can_checkpoint_with_cache = value


def _prefix_record(backbone: Any, ids: Any) -> list[Any]:
    """The keys/values of `ids` (1, n), one layer each: the forward of the prompt,
    differentiable (every row's gradient flows back into it)."""
    from transformers.cache_utils import DynamicCache

    recording, _ = _layer_classes()
    record = DynamicCache()
    record.layers = [recording() for _ in range(backbone.config.num_hidden_layers)]
    backbone(input_ids=ids, past_key_values=record, use_cache=False)  # filled all the same; no warning
    return list(record.layers)


def _prefix_cache(record: list[Any], rows: int) -> Any:
    """A read-only cache of the recorded prefix expanded to `rows` rows (views, no copy); its
    layers never store, so one cache serves any number of forwards."""
    from transformers.cache_utils import DynamicCache

    _, prefix = _layer_classes()
    shared = DynamicCache()
    shared.layers = []
    for done in record:
        layer = prefix()
        layer.lazy_initialization(done.keys, done.values)
        layer.keys = done.keys.expand(rows, -1, -1, -1)
        layer.values = done.values.expand(rows, -1, -1, -1)
        shared.layers.append(layer)
    return shared


def shared_prefix_logps(
    model: Any,
    input_ids: Any,
    attention_mask: Any,
    logits_to_keep: int,
    compute_entropy: bool = False,
    unpadded: bool = True,
) -> tuple[Any, Any]:
    """Per-token log-probs (and entropies) of the last `logits_to_keep` tokens of each row of
    `input_ids` (left-padded prompt + right-padded completion, TRL's layout), shaped like TRL's
    `_get_per_token_logps_and_entropies` (0 where the completion mask is 0). `model` carries
    TRL's fused LM head. `unpadded`: each completion runs alone, cut at its own length (else
    the group's rows together, padded to the longest)."""
    backbone = backbone_of(model)
    with _cache_kept_under_checkpointing(backbone):
        return _grouped_logps(model, backbone, input_ids, attention_mask, logits_to_keep, compute_entropy, unpadded)


def _used(mask: Any) -> int:
    """Columns up to the last filled one of a completion mask (trailing padding cut), at least 1."""
    filled = mask.nonzero()
    return int(filled[:, -1].max().item()) + 1 if filled.numel() else 1


def _grouped_logps(
    model: Any,
    backbone: Any,
    input_ids: Any,
    attention_mask: Any,
    logits_to_keep: int,
    compute_entropy: bool,
    unpadded: bool = True,
) -> tuple[Any, Any]:
    import torch
    import torch.nn.functional as F

    width = input_ids.size(1) - logits_to_keep
    prompt_ids, prompt_mask = input_ids[:, :width], attention_mask[:, :width]
    completion_ids, completion_mask = input_ids[:, width:], attention_mask[:, width:]
    firsts, group_of = prompt_groups(prompt_ids, prompt_mask)
    pieces_logps, pieces_entropy, order = [], [], []
    for group, first in enumerate(firsts):
        rows = [r for r, g in enumerate(group_of) if g == group]
        prompt = prompt_ids[first][prompt_mask[first].bool()].unsqueeze(0)  # (1, n) real tokens
        record = _prefix_record(backbone, prompt[:, :-1]) if prompt.size(1) > 1 else None
        past = prompt.size(1) - 1
        for batch in [[r] for r in rows] if unpadded else [rows]:
            mask = completion_mask[batch]
            used = _used(mask)
            tail = torch.cat([prompt[:, -1:].expand(len(batch), 1), completion_ids[batch, :used]], dim=1)
            tail_mask = torch.cat([mask.new_ones(len(batch), 1), mask[:, :used]], dim=1)
            labels = tail.masked_fill(tail_mask == 0, -100)
            labels[:, 0] = -100
            cache = _prefix_cache(record, len(batch)) if record is not None else None
            full_mask = torch.cat([tail_mask.new_ones(len(batch), past), tail_mask], dim=1)
            out = model(
                input_ids=tail, attention_mask=full_mask, past_key_values=cache, labels=labels, fused_lm_head=True
            )
            pieces_logps.append(F.pad(out.log_probs, (0, logits_to_keep - used)))
            if compute_entropy:
                pieces_entropy.append(F.pad(out.entropy, (0, logits_to_keep - used)))
            order.extend(batch)
    inverse = torch.empty(len(order), dtype=torch.long, device=input_ids.device)
    inverse[torch.tensor(order, device=input_ids.device)] = torch.arange(len(order), device=input_ids.device)
    logps = torch.cat(pieces_logps, dim=0).index_select(0, inverse)
    entropy = torch.cat(pieces_entropy, dim=0).index_select(0, inverse) if compute_entropy else None
    return logps, entropy
