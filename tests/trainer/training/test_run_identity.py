"""A training directory continues only the run it was started for: the same model, dataset and parent."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from assistant.errors import UserError
from trainer.training.run_identity import RUN, claim, identity


def test_the_first_claim_records_the_run_and_the_same_run_continues(tmp_path: Path) -> None:
    out = tmp_path / "run"
    ident = identity("tiny", {"data_hash": "abc"}, SimpleNamespace(version=3))
    claim(out, ident)
    assert json.loads((out / RUN).read_text()) == {"base_model": "tiny", "data_hash": "abc", "parent_version": 3}
    claim(out, ident)  # a resume


@pytest.mark.parametrize(
    ("model", "data_hash", "parent", "named"),
    [("tiny", "def", None, "data_hash 'abc' there, 'def' now"), ("tiny", "abc", 2, "parent_version None there, 2 now")],
)
def test_another_dataset_or_parent_is_refused_in_one_sentence(
    tmp_path: Path, model: str, data_hash: str, parent: int | None, named: str
) -> None:
    claim(tmp_path, identity("tiny", {"data_hash": "abc"}, None))
    other = identity(model, {"data_hash": data_hash}, SimpleNamespace(version=parent) if parent else None)
    with pytest.raises(UserError, match="holds a training run of another setup") as err:
        claim(tmp_path, other)
    assert named in str(err.value) and "\n" not in str(err.value)
