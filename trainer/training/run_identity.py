"""What a training directory was started for (`<out>/run.json`): the base model, the dataset's
hash and the parent adapter. A later `cobalt train` into the same directory continues it (resumes
from its newest checkpoint, or returns its saved adapter) only when they match; otherwise one
sentence says what differs, so weights trained on one dataset or parent are never continued, or
returned, as another's."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from assistant.errors import UserError

RUN = "run.json"


def identity(model: str, data_meta: dict[str, Any], parent: Any) -> dict[str, Any]:
    return {
        "base_model": model,
        "data_hash": data_meta.get("data_hash"),
        "parent_version": getattr(parent, "version", None),
    }


def claim(out: Path, ident: dict[str, Any]) -> None:
    """Record `ident` as the run of `out`, or check that it is the one recorded there."""
    path = out / RUN
    if path.is_file():
        try:
            recorded = json.loads(path.read_text())
        except ValueError:
            recorded = None
        if isinstance(recorded, dict):
            differ = [
                f"{key} {recorded.get(key)!r} there, {value!r} now"
                for key, value in ident.items()
                if recorded.get(key) != value
            ]
            if differ:
                raise UserError(
                    f"{out} holds a training run of another setup ({'; '.join(differ)}); "
                    "train into a new --out, or delete that directory to start over"
                )
            return
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{RUN}.{os.getpid()}"
    tmp.write_text(json.dumps(ident, indent=2, sort_keys=True))
    os.replace(tmp, path)
