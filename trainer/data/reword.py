"""A built dataset with its feedback turns in another wording (`cobalt dataset reword`).

Every user message of a row's prompt that carries execution feedback (it holds
`prompts.MARKER`) is written again as the named wording's prefix + the same feedback text + its
suffix (configs/prompts.yaml `feedback_wordings`), so a dataset built while the served model had
another wording trains on the prompt it is served with now (`model_wordings`). The first turn,
the replies in the context, the feedback texts and the guides stay as they are; `prompt_tokens`
is counted again. The dataset is copied to a new directory with its meta extended
(`reworded_from`: the input's data hash and wording, and how many rows and messages changed);
the input is not changed. A guide written as a reply to the old wording (`cobalt dataset
rationalize`) still answers that one: guide or rationalize the copy again where that matters.
This module writes files only; it never runs programs or calls a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from assistant.loop import prompts
from assistant.messages.shapes import Message
from assistant.settings import DEFAULT_ANSWER_FORMAT
from trainer.data.dataset_files import SPLITS, check_inputs, read_meta, read_rows, validation_problems, write


def reworded(messages: list[Message], style: prompts.PromptStyle) -> tuple[list[Message], int]:
    """`messages` with each feedback turn in `style`'s wording, and how many were rewritten."""
    out, changed = [], 0
    for message in messages:
        content = message.get("content", "")
        if message.get("role") == "user" and prompts.MARKER in content:
            new = style.feedback_content(prompts.feedback_of(content))
            changed += new != content
            message = {**message, "content": new}
        out.append(message)
    return out, changed


def reword(
    dataset: Path, out: Path, wording: str, count_tokens: Callable[[list[Message]], int] | None = None
) -> dict[str, Any]:
    """Write `dataset` with its feedback turns in `wording` to `out` (new or empty); returns the
    written meta. `count_tokens` counts a prompt's tokens again (the row keeps its count without it)."""
    check_inputs([dataset], out)
    source = read_meta(dataset)
    before = dict(source.get("prompt") or {})
    style = prompts.style(before.get("answer_format", DEFAULT_ANSWER_FORMAT), wording)
    rows = {split: read_rows(dataset, split) for split in SPLITS}
    counts = {"rows": 0, "rows_reworded": 0, "messages_reworded": 0}
    for split_rows in rows.values():
        for row in split_rows:
            row["prompt"], changed = reworded(row["prompt"], style)
            counts["rows"] += 1
            counts["rows_reworded"] += bool(changed)
            counts["messages_reworded"] += changed
            if count_tokens is not None:
                row["prompt_tokens"] = count_tokens(row["prompt"])
    meta = {k: v for k, v in source.items() if k != "data_hash"}
    meta["prompt"] = {**before, "feedback_wording": wording}
    meta["reworded_from"] = {
        "data_hash": source["data_hash"],
        "feedback_wording": before.get("feedback_wording"),
        "counts": counts,
    }
    return write(out, rows["train"], rows["validation"], validation_problems(dataset), meta)
