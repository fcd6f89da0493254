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


def test_another_seed_or_recipe_is_refused_and_an_older_record_still_resumes(tmp_path: Path) -> None:
    """TRL orders the prompts by the seed and a resume skips the first `step` batches of that order:
    under another seed some prompts are trained twice and others never. The step count may change."""
    from trainer.train_settings import load_train_settings
    from trainer.training.run_identity import recipe_hash

    settings = load_train_settings({}, "test")
    recipe = recipe_hash(settings, {})
    claim(tmp_path / "a", identity("tiny", {"data_hash": "abc"}, None, 0, recipe))
    with pytest.raises(UserError, match="seed 0 there, 1 now"):
        claim(tmp_path / "a", identity("tiny", {"data_hash": "abc"}, None, 1, recipe))
    tweaked = recipe_hash(settings, {"learning_rate": 1.0})
    with pytest.raises(UserError, match="recipe"):
        claim(tmp_path / "a", identity("tiny", {"data_hash": "abc"}, None, 0, tweaked))
    same = recipe_hash(settings, {"save_steps": 1, "logging_steps": 1, "max_steps": 9})
    assert same == recipe  # saving, logging and where it stops: not the recipe
    claim(tmp_path / "old", identity("tiny", {"data_hash": "abc"}, None))  # recorded before seeds were
    claim(tmp_path / "old", identity("tiny", {"data_hash": "abc"}, None, 0, recipe))  # it resumes
