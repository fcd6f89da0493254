"""Guides in the served model's own words (`cobalt dataset rationalize`): each guided training row's
guide (its task's reference as a served reply, `trainer.data.guides`) becomes the served model's
own reply to the row's prompt with that guide shown as a hint, kept only when it passes every
test of the row's problem, as the training reward scores it (1.0: passed, well formed, not
tampered). Otherwise the row loses its guide.

Why: the reference guides are a bare program, and a feedback turn's served reply explains the
failure before its program. Guided training then taught code-first feedback replies, and code
first is where the 1.5B base copies its failing program (docs/experiments/2026-12-01-1.5b-own-3.md:
forced to open with a fence, 15 of its 20 first feedback replies came back unchanged against 8).
A hinted reply keeps the model's own form and the reference's correctness: STaR's
rationalization (Zelikman et al. 2022, "STaR: Bootstrapping Reasoning With Reasoning"), which
gives the model the answer as a hint and keeps the reasoning that reaches it. A reply that speaks
of the hint (`leaks`) is dropped: the training prompt does not hold it.

Each reply is journaled in `<out>/replies.jsonl` as it comes (kept or not, and why; on an error the
replies still in flight too), so an interrupted run goes on where it stopped; the journal stays beside
the dataset as its record. Each entry carries a digest of what made it (model, adapter, hint, leak
words): a run of another source is refused in a directory whose journal holds replies of another, so
one dataset never mixes two. The input dataset is not changed. Programs run only in the sandbox,
through the reward.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable

from assistant.errors import UserError
from assistant.interfaces import ChatModel
from assistant.messages import extract
from trainer.data import dataset_files
from trainer.data.dataset_files import read_meta, read_rows, validation_problems, write
from trainer.train_settings import RationalizeSettings

JOURNAL = "replies.jsonl"
KEPT, FAILED, LEAKED = "kept", "failed", "leaked"
Reward = Callable[..., list[float | None]]  # trainer.training.reward.SandboxReward's call


def row_key(row: dict[str, Any]) -> str:
    """A training row's identity in the journal: its prompt and guide."""
    return hashlib.sha256(json.dumps([row["prompt"], row["guide"]], sort_keys=True).encode()).hexdigest()[:16]


def source_digest(source: dict[str, Any] | None) -> str:
    """What made the replies (`source`: model, adapter, hint, leak words), as the journal records it."""
    return hashlib.sha256(json.dumps(source or {}, sort_keys=True).encode()).hexdigest()[:16]


def hinted(prompt: list[dict[str, Any]], guide: str, hint: str) -> list[dict[str, Any]]:
    """`prompt` with `hint` (its `{guide}` filled) appended to the last user message."""
    messages = copy.deepcopy(list(prompt))
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    messages[last]["content"] = f"{messages[last]['content']}\n\n{hint.replace('{guide}', guide)}"
    return messages


def leaked(reply: str, words: list[str]) -> str | None:
    """The first of `words` the reply's prose says (any case; its program may name anything), or None."""
    program = extract.code(reply)
    lower = (reply.replace(program, "") if program else reply).lower()
    return next((w for w in words if w.lower() in lower), None)


def read_journal(out: Path) -> dict[str, dict[str, Any]]:
    """The replies an earlier run of this `out` journaled, by row key."""
    path = out / JOURNAL
    if not path.is_file():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    return {e["key"]: e for e in (json.loads(line) for line in lines if line.strip())}


def check_inputs(dataset: Path, out: Path, source: dict[str, Any] | None = None) -> None:
    """One clear error unless `dataset` is a built dataset with guided training rows and `out` is new,
    empty or an interrupted run's of the same `source` (before a model server is started for nothing)."""
    dataset_files.check_inputs([dataset], out, keep={JOURNAL})
    if not any(row.get("guide") for row in read_rows(dataset, "train")):
        raise UserError(f"{dataset} has no guided training rows; run `cobalt dataset guide` first")
    digest = source_digest(source)
    if any(e.get("source") != digest for e in read_journal(out).values()):
        raise UserError(
            f"{out / JOURNAL} holds replies made by another model, adapter, hint or leak list; choose a new directory"
        )


class Judge:
    """One row's hinted reply, judged: cut at its answer's end, then leak check, then the reward."""

    def __init__(self, client: ChatModel, reward: Reward, settings: RationalizeSettings) -> None:
        self.client, self.reward, self.settings = client, reward, settings
        self._reward_lock = threading.Lock()

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        s = self.settings
        messages = hinted(row["prompt"], row["guide"], s.hint)
        reply = extract.cut_at_answer(self.client.chat(messages, temperature=0.0, max_tokens=s.max_tokens).text)
        entry: dict[str, Any] = {"key": row_key(row), "task_id": row.get("task_id"), "reply": reply}
        word = leaked(reply, s.leaks)
        if word is not None:
            return entry | {"outcome": LEAKED, "why": word}
        with self._reward_lock:
            (value,) = self.reward(
                [row["prompt"]], [reply], problem=[row["problem"]], prev_best=[float(row.get("prev_best", 0.0))]
            )
        if value is None:
            raise UserError(f"the sandbox kept faulting on the reply for {row.get('task_id')}; rerun to go on")
        return entry | {"outcome": KEPT if value >= 1.0 else FAILED, "reward": value}


def rationalize(
    dataset: Path,
    out: Path,
    judge: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    concurrency: int = 1,
    source: dict[str, Any] | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Write `dataset` to `out` with each guided training row's guide replaced by its judged reply
    (kept) or emptied; returns the written meta. `source`: what made the replies (model, adapter,
    hint), recorded in meta.json."""
    check_inputs(dataset, out, source)
    digest = source_digest(source)
    meta_in = read_meta(dataset)
    train, validation = read_rows(dataset, "train"), read_rows(dataset, "validation")
    guided = [row for row in train if row.get("guide")]
    journal = read_journal(out)
    todo = {row_key(row): row for row in guided if row_key(row) not in journal}
    out.mkdir(parents=True, exist_ok=True)
    pool = ThreadPoolExecutor(concurrency)
    futures = [pool.submit(judge, row) for row in todo.values()]
    with (out / JOURNAL).open("a", encoding="utf-8") as log:

        def record(future: Future) -> None:
            entry = future.result() | {"source": digest}
            log.write(json.dumps(entry) + "\n")
            log.flush()
            journal[entry["key"]] = entry

        try:
            for done, future in enumerate(as_completed(futures), 1):
                record(future)
                kept = sum(e["outcome"] == KEPT for e in journal.values())
                progress(f"{len(journal)}/{len(guided)} guides rationalized ({done} this run), {kept} kept")
        finally:  # on an error or ^C the rows not started are not asked; the replies in flight are kept
            pool.shutdown(wait=True, cancel_futures=True)
            for future in futures:
                if not future.cancelled() and future.exception() is None and future.result()["key"] not in journal:
                    record(future)
    counts = {
        "rows": len(train),
        "guided_in": len(guided),
        KEPT: 0,
        FAILED: 0,
        LEAKED: 0,
        "resumed": len(guided) - len(todo),
    }
    for row in guided:
        entry = journal[row_key(row)]
        counts[entry["outcome"]] += 1
        row["guide"] = entry["reply"] if entry["outcome"] == KEPT else ""
    meta = {k: v for k, v in meta_in.items() if k != "data_hash"}
    meta.update({"rationalized_from": meta_in["data_hash"], "rationalize": {"counts": counts, **(source or {})}})
    return write(out, train, validation, validation_problems(dataset), meta)
