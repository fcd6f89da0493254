"""`cobalt dataset reword` on the shipped own-5 dataset (built with the `default` wording): every
feedback turn is the new wording around the same feedback text, nothing else in a row changes,
a round trip through a wording with a suffix gives the input's rows back byte for byte, the input
is unchanged and bad input is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.config_files import PromptError
from assistant.errors import UserError
from assistant.loop import prompts
from trainer.data.dataset_files import read_meta, read_rows
from trainer.data.reword import reword

ROOT = Path(__file__).resolve().parents[3]
OWN5 = ROOT / "examples/adapters/qwen-coder-1.5b-own-5/dataset"


def test_feedback_turns_take_the_new_wording_and_nothing_else_changes(tmp_path: Path) -> None:
    before = (OWN5 / "train.jsonl").read_bytes()
    meta = reword(OWN5, tmp_path / "out", "code_first")
    style = prompts.style("code_first", "code_first")
    rewritten = 0
    for split in ("train", "validation"):
        old, new = read_rows(OWN5, split), read_rows(tmp_path / "out", split)
        assert len(old) == len(new)
        for a, b in zip(old, new):
            assert {k: v for k, v in a.items() if k != "prompt"} == {k: v for k, v in b.items() if k != "prompt"}
            assert len(a["prompt"]) == len(b["prompt"])
            for m, n in zip(a["prompt"], b["prompt"]):
                if m["role"] == "user" and prompts.MARKER in m["content"]:
                    assert n["content"] == style.feedback_content(prompts.feedback_of(m["content"]))
                    assert n["content"].startswith("Your previous program is wrong.")
                    rewritten += 1
                else:
                    assert m == n
    assert rewritten == meta["reworded_from"]["counts"]["messages_reworded"] > 100
    assert meta["prompt"] == {"answer_format": "code_first", "feedback_wording": "code_first"}
    assert meta["reworded_from"]["feedback_wording"] == "default"
    assert meta["reworded_from"]["data_hash"] == read_meta(OWN5)["data_hash"] != meta["data_hash"]
    assert meta["rationalize"] == read_meta(OWN5)["rationalize"]  # the input's history is kept
    assert (OWN5 / "train.jsonl").read_bytes() == before


def test_a_round_trip_gives_the_rows_back(tmp_path: Path) -> None:
    there = reword(OWN5, tmp_path / "there", "instruction_last")  # a wording with a suffix
    back = reword(tmp_path / "there", tmp_path / "back", "default")
    assert there["data_hash"] != back["data_hash"] == read_meta(OWN5)["data_hash"]
    assert (tmp_path / "back/train.jsonl").read_bytes() == (OWN5 / "train.jsonl").read_bytes()
    assert back["reworded_from"]["counts"]["messages_reworded"] == there["reworded_from"]["counts"]["messages_reworded"]


def test_tokens_are_counted_again(tmp_path: Path) -> None:
    reword(OWN5, tmp_path / "out", "brief", count_tokens=lambda messages: sum(len(m["content"]) for m in messages))
    for row in read_rows(tmp_path / "out", "train"):
        assert row["prompt_tokens"] == sum(len(m["content"]) for m in row["prompt"])


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a built dataset"):
        reword(tmp_path, tmp_path / "out", "brief")
    (tmp_path / "full").mkdir()
    (tmp_path / "full/x").write_text("x")
    with pytest.raises(UserError, match="not empty"):
        reword(OWN5, tmp_path / "full", "brief")
    with pytest.raises(PromptError, match="nope"):
        reword(OWN5, tmp_path / "out", "nope")
