"""Build the bandit dataset from sessions: select prompts (`trainer.data.dataset`, per part of
the own/synthetic mix: `trainer.data.mix`), drop
over-long prompts with the policy tokenizer, perturb a fraction of the contexts in the
sandbox (`trainer.data.context`), and write the files (`trainer.data.dataset_files`).

Sessions come from `trainer.data.session_source` (the store or a JSONL export). This module does not
train, read the store, or define the file format.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from assistant.interfaces import BatchRunner
from assistant.loop import prompts
from assistant.problems.schema import Problem
from assistant.serving import models
from assistant.settings import LoopSettings, PathsSettings
from assistant.store.trajectory import SessionRecord
from trainer.data import context, dataset_files
from trainer.data.dataset import FILTER_ORDER, BuildStats, PartialPrompt
from trainer.data.mix import select_mix
from trainer.train_settings import TrainSettings


def prompt_tokens(tokenizer: Any, messages: list[dict[str, str]]) -> int:
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def load_tokenizer(model: str, paths: PathsSettings | None = None) -> Any:
    """The tokenizer of a prepared model (or checkpoint directory)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(models.resolve(model, paths)))


@dataclass
class BuiltDataset:
    path: Path
    stats: dict[str, int]
    data_hash: str
    train_rows: int
    validation_rows: int
    validation_problems: list[Problem]
    mix: dict[str, Any] | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "data_hash": self.data_hash,
            "train": self.train_rows,
            "validation": self.validation_rows,
            "counts": self.stats,
            "mix": self.mix,
        }


def _rows(
    items: list[PartialPrompt], split: str, tokenizer: Any, limit: int, stats: BuildStats | None
) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        n = prompt_tokens(tokenizer, item.messages()) if tokenizer is not None else 0
        if tokenizer is not None and n > limit:
            if stats:
                stats.add("prompts_too_long")
            continue
        rows.append(item.row(split, n))
    return rows


def _origins(rows: list[dict[str, Any]]) -> dict[str, int]:
    return dict(sorted(Counter(r["origin"] for r in rows).items()))


def build(
    sessions: list[SessionRecord],
    out: Path,
    settings: TrainSettings,
    *,
    tokenizer: Any,
    sandbox: BatchRunner | None,
    loop: LoopSettings,
    model: str | None = None,
    perturb: bool = True,
    extra_meta: dict[str, Any] | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> BuiltDataset:
    """Select, filter, perturb and write the dataset; returns its summary. Its prompts are in the
    style `model` (the policy's built-in name) is served with (`prompts.style_for`)."""
    ds = settings.dataset
    stats = BuildStats()
    for name in FILTER_ORDER:
        stats.counts.setdefault(name, 0)
    style = prompts.style_for(loop, model)
    chosen, mix = select_mix(
        sessions, ds.mix, k=ds.k, max_context=ds.max_context_turns, seed=ds.seed, stats=stats, style=style
    )
    progress(f"selected {len(chosen.train)} training prompts from {stats.counts['tasks']} tasks")
    if perturb and ds.perturb_fraction > 0 and sandbox is not None:
        plans = context.choose(chosen.train, ds.perturb_fraction, random.Random(ds.seed), stats, loop.sanitize_answers)
        if plans:
            progress(f"re-running {sum(len(p.jobs) for p in plans)} context programs on perturbed tests")
            context.apply(plans, sandbox, loop, settings.reward.sandbox_retries, settings.reward.retry_wait_s, stats)
    train = _rows(chosen.train, "train", tokenizer, ds.max_prompt_tokens, stats)
    validation = _rows(chosen.validation, "validation", tokenizer, ds.max_prompt_tokens, None)
    stats.counts["train_prompts"] = len(train)
    stats.counts["validation_prompts"] = len(validation)
    stats.counts["validation_tasks"] = len(chosen.validation_problems)
    mix_meta = {**mix.to_dict(), "rows": {"train": _origins(train), "validation": _origins(validation)}}
    meta = dataset_files.write(
        out,
        train,
        validation,
        chosen.validation_problems,
        {
            "counts": {k: stats.counts[k] for k in FILTER_ORDER},
            "settings": {"dataset": ds.model_dump(), "profile": settings.profile},
            "prompt": {"answer_format": style.answer_format_name, "feedback_wording": style.feedback_wording_name},
            "mix": mix_meta,
            "created_at": time.time(),
            **(extra_meta or {}),
        },
    )
    return BuiltDataset(
        out, meta["counts"], meta["data_hash"], len(train), len(validation), chosen.validation_problems, mix_meta
    )
