"""Build the bandit dataset files from stored sessions (or an imported JSONL export):
select prompts (`trainer.dataset`), drop over-long prompts with the policy tokenizer,
perturb a fraction of the contexts in the sandbox (`trainer.context`), and write

    <out>/train.jsonl, <out>/validation.jsonl      Hugging Face `datasets`-loadable rows
    <out>/validation_problems.jsonl                the validation tasks (for the gate)
    <out>/meta.json                                counts per filter, data hash, settings

`load_split(out, "train")` gives a `datasets.Dataset`; `datasets.load_dataset("json",
data_files=...)` reads the same files. This module does not train.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from assistant.interfaces import BatchRunner
from assistant.problems import Problem
from assistant.records import read_jsonl
from assistant.settings import LoopSettings, PathsSettings
from assistant.store import Store
from assistant.trajectory import SessionRecord
from trainer import context
from trainer.dataset import FILTER_ORDER, BuildStats, PartialPrompt, select
from trainer.settings import TrainSettings

SPLITS = ("train", "validation")


def _usable(problem: Problem | None) -> Problem | None:
    if problem is not None and problem.kind == "pytest" and not Path(str(problem.project_dir)).is_dir():
        return None  # a local project that is not on this machine cannot be run
    return problem


def sessions_from_store(store: Store, *, sources: Iterable[str] | None = None, since: float | None = None,
                        until: float | None = None) -> list[SessionRecord]:
    """Sessions (with turns and problem) from `sources`, started in (since, until]."""
    wanted = set(sources) if sources is not None else None
    out = []
    cache: dict[str, Problem | None] = {}
    for s in store.sessions():
        if wanted is not None and s.source not in wanted:
            continue
        if since is not None and s.started_at <= since:
            continue
        if until is not None and s.started_at > until:
            continue
        s.turns = store.turns(s.id)
        if s.problem_hash not in cache:
            cache[s.problem_hash] = _usable(store.problem_by_hash(s.problem_hash))
        s.problem = cache[s.problem_hash]
        out.append(s)
    return out


def sessions_from_jsonl(path: Path) -> list[SessionRecord]:
    """Sessions of a JSONL export (ours or the reference implementation's)."""
    with open(path, encoding="utf-8") as fh:
        sessions = read_jsonl(fh, str(path))
    for s in sessions:
        s.problem = _usable(s.problem)
    return sessions


def prompt_tokens(tokenizer: Any, messages: list[dict[str, str]]) -> int:
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def load_tokenizer(model: str, paths: PathsSettings | None = None) -> Any:
    """The tokenizer of a prepared model (or checkpoint directory)."""
    from transformers import AutoTokenizer

    from assistant import models

    return AutoTokenizer.from_pretrained(str(models.resolve(model, paths)))


@dataclass
class BuiltDataset:
    path: Path
    stats: dict[str, int]
    data_hash: str
    train_rows: int
    validation_rows: int
    validation_problems: list[Problem]

    def summary(self) -> dict[str, Any]:
        return {"path": str(self.path), "data_hash": self.data_hash, "train": self.train_rows,
                "validation": self.validation_rows, "counts": self.stats}


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> bytes:
    blob = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(blob)
    os.replace(tmp, path)
    return blob


def _rows(items: list[PartialPrompt], split: str, tokenizer: Any, limit: int,
          stats: BuildStats | None) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        n = prompt_tokens(tokenizer, item.messages()) if tokenizer is not None else 0
        if tokenizer is not None and n > limit:
            if stats:
                stats.add("prompts_too_long")
            continue
        rows.append(item.row(split, n))
    return rows


def build(sessions: list[SessionRecord], out: Path, settings: TrainSettings, *, tokenizer: Any,
          sandbox: BatchRunner | None, loop: LoopSettings, perturb: bool = True,
          extra_meta: dict[str, Any] | None = None,
          progress: Callable[[str], None] = lambda _: None) -> BuiltDataset:
    """Select, filter, perturb and write the dataset; returns its summary."""
    ds = settings.dataset
    stats = BuildStats()
    for name in FILTER_ORDER:
        stats.counts.setdefault(name, 0)
    chosen = select(sessions, k=ds.k, max_context=ds.max_context_turns, stats=stats)
    progress(f"selected {len(chosen.train)} training prompts from {stats.counts['tasks']} tasks")
    if perturb and ds.perturb_fraction > 0 and sandbox is not None:
        plans = context.choose(chosen.train, ds.perturb_fraction, random.Random(ds.seed), stats)
        if plans:
            progress(f"re-running {sum(len(p.jobs) for p in plans)} context programs on perturbed tests")
            context.apply(plans, sandbox, loop, settings.reward.sandbox_retries,
                          settings.reward.retry_wait_s, stats)
    train = _rows(chosen.train, "train", tokenizer, ds.max_prompt_tokens, stats)
    validation = _rows(chosen.validation, "validation", tokenizer, ds.max_prompt_tokens, None)
    stats.counts["train_prompts"] = len(train)
    stats.counts["validation_prompts"] = len(validation)
    stats.counts["validation_tasks"] = len(chosen.validation_problems)
    out.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    digest.update(_write_jsonl(out / "train.jsonl", train))
    digest.update(_write_jsonl(out / "validation.jsonl", validation))
    _write_jsonl(out / "validation_problems.jsonl", [p.to_dict() for p in chosen.validation_problems])
    data_hash = digest.hexdigest()
    meta = {"data_hash": data_hash, "counts": {k: stats.counts[k] for k in FILTER_ORDER},
            "settings": {"dataset": vars(ds), "profile": settings.profile}, "created_at": time.time(),
            **(extra_meta or {})}
    tmp = out / "meta.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2, sort_keys=True))
    os.replace(tmp, out / "meta.json")
    return BuiltDataset(out, meta["counts"], data_hash, len(train), len(validation), chosen.validation_problems)


def read_meta(path: Path) -> dict[str, Any]:
    return json.loads((path / "meta.json").read_text())


def read_rows(path: Path, split: str) -> list[dict[str, Any]]:
    file = path / f"{split}.jsonl"
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_split(path: Path, split: str = "train") -> Any:
    """One split as a `datasets.Dataset`."""
    from datasets import Dataset

    return Dataset.from_list(read_rows(path, split))


def validation_problems(path: Path) -> list[Problem]:
    lines = (path / "validation_problems.jsonl").read_text(encoding="utf-8").splitlines()
    return [Problem.from_dict(json.loads(line), "validation", check_paths=False) for line in lines if line.strip()]
