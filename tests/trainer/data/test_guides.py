"""`cobalt dataset guide` on the committed own-1 dataset: every training row of a train-split task
gets its reference as a served reply (no docstring, one python block), validation rows and tasks
without a train reference get none, `origins` limits the guides to those mix parts, held-out
tasks are never among the references, the input dataset is unchanged and bad input is one clear
error."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.errors import UserError
from assistant.problems.natural import NATURAL_DIR
from assistant.problems.splits import membership
from assistant.settings import SplitSection
from trainer.data.dataset_files import read_meta, read_rows
from trainer.data.guides import add_guides, train_references
from trainer.repair.items import humaneval_sources
from trainer.repair.served_form import served_reply

ROOT = Path(__file__).resolve().parents[3]
OWN1 = ROOT / "examples/adapters/qwen-coder-own-1/dataset"


@pytest.fixture(scope="module")
def references() -> dict[str, str]:
    return train_references([NATURAL_DIR], SplitSection())


def test_references_come_from_train_tasks_only(references: dict[str, str]) -> None:
    rule = SplitSection()
    humaneval = humaneval_sources("all", rule)
    splits = membership([p for p, _ in humaneval], rule)
    train = {p.id for p, _ in humaneval if splits[p.id] == "train"}
    assert train and train <= set(references)
    assert not {p.id for p, _ in humaneval if splits[p.id] != "train"} & set(references)
    natural = [i for i in references if i.startswith("natural/")]
    assert len(natural) == 121  # the natural set's train split (docs/data.md)
    assert len(references) == len(train) + len(natural)


def test_training_rows_get_their_tasks_reference_as_a_served_reply(tmp_path: Path, references: dict[str, str]) -> None:
    before = (OWN1 / "train.jsonl").read_bytes()
    meta = add_guides(OWN1, tmp_path / "out", references)
    rows = read_rows(tmp_path / "out", "train")
    guided = [r for r in rows if r["guide"]]
    assert guided and len(rows) == len(read_rows(OWN1, "train"))
    for row in guided:
        guide = row["guide"]
        assert guide.startswith("```python\n") and guide.rstrip().endswith("```") and '"""' not in guide
        assert guide == served_reply(references[row["task_id"]])
    assert all(r["task_id"] not in references for r in rows if not r["guide"])
    assert all(r["guide"] == "" for r in read_rows(tmp_path / "out", "validation"))
    assert meta["guides"] == {
        "rows": len(rows),
        "guided": len(guided),
        "no_reference": len(rows) - len(guided),
        "other_origin": 0,
    }
    assert meta["guided_origins"] is None
    assert meta["guided_from"] == read_meta(OWN1)["data_hash"] != meta["data_hash"]
    assert (OWN1 / "train.jsonl").read_bytes() == before


def test_origins_limit_the_guides_to_those_mix_parts(tmp_path: Path, references: dict[str, str]) -> None:
    add_guides(OWN1, tmp_path / "all", references)
    everything = read_rows(tmp_path / "all", "train")
    meta = add_guides(OWN1, tmp_path / "synthetic", references, ["synthetic"])
    rows = read_rows(tmp_path / "synthetic", "train")
    assert [r["task_id"] for r in rows] == [r["task_id"] for r in everything]
    own = [r for r in rows if r["origin"] == "own"]
    synthetic = [r for r in rows if r["origin"] == "synthetic"]
    assert own and synthetic and all(r["guide"] == "" for r in own)
    assert [r["guide"] for r in synthetic] == [r["guide"] for r in everything if r["origin"] == "synthetic"]
    assert any(r["guide"] for r in synthetic) and any(r["guide"] for r in everything if r["origin"] == "own")
    assert meta["guides"]["other_origin"] == len(own)
    assert meta["guides"]["guided"] == sum(1 for r in synthetic if r["guide"])
    assert meta["guided_origins"] == ["synthetic"]


def test_bad_input_is_one_clear_error(tmp_path: Path, references: dict[str, str]) -> None:
    with pytest.raises(UserError, match="not a built dataset"):
        add_guides(tmp_path, tmp_path / "a", references)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(UserError, match="not empty"):
        add_guides(OWN1, tmp_path / "full", references)
