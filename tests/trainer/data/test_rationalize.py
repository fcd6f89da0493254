"""`cobalt dataset rationalize` on four guided rows of the committed own-1 dataset, through the real chat
client (litellm's mock_response, a reply chosen per row) and the real sandbox: a passing hinted reply
becomes the guide, cut at its answer's end; a failing one or one that speaks of the hint leaves the row
unguided; the model sees the hint after the prompt's last user message and nothing else changes; an
interrupted run goes on from its journal asking only the rows left, and only with the same model and
hint; bad input is one clear error."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from assistant.errors import UserError
from assistant.problems.natural import NATURAL_DIR
from assistant.serving.chat import ChatClient
from assistant.settings import SplitSection
from trainer.data.dataset_files import read_meta, read_rows, validation_problems, write
from trainer.data.guides import add_guides, train_references
from trainer.data.rationalize import JOURNAL, Judge, hinted, rationalize, read_journal
from trainer.train_settings import RationalizeSettings, RewardSettings
from trainer.training.reward import SandboxReward

ROOT = Path(__file__).resolve().parents[3]
OWN1 = ROOT / "examples/adapters/qwen-coder-own-1/dataset"
SETTINGS = RationalizeSettings()
WRONG = "I changed the return value.\n\n```python\ndef nothing():\n    return None\n```"


class RowClient(ChatClient):
    """Answers each request with `reply(last user message)` (litellm's mock_response), whole (the cut is
    rationalize's); keeps the requests."""

    def __init__(self, reply: Any) -> None:
        super().__init__("openai/scripted-model", display_name="rows", retries=0, timeout_s=30, stop_at_fence=False)
        self.reply, self.asked = reply, []

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        self.asked.append(messages)
        return {"mock_response": self.reply(messages[-1]["content"])}


@pytest.fixture(scope="module")
def guided(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four guided training rows of four tasks and one unguided row, as a built dataset."""
    full = tmp_path_factory.mktemp("guided") / "all"
    add_guides(OWN1, full, train_references([NATURAL_DIR], SplitSection()))
    rows, tasks = [], set()
    for row in read_rows(full, "train"):
        if row["guide"] and row["task_id"] not in tasks and len(tasks) < 4:
            rows.append(row)
            tasks.add(row["task_id"])
    rows.append(next(r for r in read_rows(full, "train") if r["task_id"] not in tasks) | {"guide": ""})
    out = full.parent / "four"
    write(out, rows, read_rows(full, "validation"), validation_problems(full), read_meta(full) | {"note": "four rows"})
    return out


def replies(rows: list[dict[str, Any]], fail_once: set[int], slow: float = 0.0) -> Any:
    """Row 0: an explanation, the guide, a closing remark (kept, cut), but the first request for it fails
    when `fail_once` holds it; row 1: speaks of the hint, after `slow` seconds; row 2: a wrong program;
    row 3: the guide after an explanation."""
    by_guide = {row["guide"]: i for i, row in enumerate(rows) if row["guide"]}

    def reply(last_user: str) -> str:
        i = next(i for guide, i in by_guide.items() if last_user.endswith(guide))
        guide = rows[i]["guide"]
        if i in fail_once:
            fail_once.discard(i)
            raise RuntimeError("the server went away")
        if i == 1:
            time.sleep(slow)
        return [
            f"The loop stops one element early.\n\n{guide}\n\nThis version handles it.",
            f"Following the hint, here it is.\n\n{guide}",
            WRONG,
            f"The condition was inverted.\n\n{guide}",
        ][i]

    return reply


def test_hinted_replies_that_pass_become_the_guides_and_a_run_goes_on_from_its_journal(
    tmp_path: Path, guided: Path, sandbox
) -> None:
    before = (guided / "train.jsonl").read_bytes()
    rows = read_rows(guided, "train")
    reward = SandboxReward(sandbox, RewardSettings())
    out = tmp_path / "why"
    first = RowClient(replies(rows, fail_once={0}, slow=1.0))
    source = {"model": "scripted", "hint": SETTINGS.hint}
    with pytest.raises(Exception, match="went away"):  # row 0 fails while row 1 is in flight
        rationalize(guided, out, Judge(first, reward, SETTINGS), concurrency=2, source=source)
    finished = read_journal(out)  # every reply that came, the slow one in flight included; row 0 not
    assert len(finished) == len(first.asked) - 1 and "leaked" in [e["outcome"] for e in finished.values()]
    assert len(first.asked) < 4  # the rows not started were not asked

    other = RowClient(replies(rows, fail_once=set()))
    for changed in ({**source, "model": "another"}, {**source, "hint": "Here: {guide}"}):
        with pytest.raises(UserError, match="another model, adapter, hint"):  # one run's replies per directory
            rationalize(guided, out, Judge(other, reward, SETTINGS), source=changed)
    assert other.asked == [] and read_journal(out) == finished

    again = RowClient(replies(rows, fail_once=set()))
    meta = rationalize(guided, out, Judge(again, reward, SETTINGS), concurrency=2, source=source)
    assert len(again.asked) == 4 - len(finished)  # only the rows the first run did not finish
    new = read_rows(out, "train")
    assert new[0]["guide"] == f"The loop stops one element early.\n\n{rows[0]['guide']}"
    assert new[1]["guide"] == "" and new[2]["guide"] == ""
    assert new[3]["guide"] == f"The condition was inverted.\n\n{rows[3]['guide']}"
    assert new[4] == rows[4]  # unguided: as it was
    assert [{k: v for k, v in r.items() if k != "guide"} for r in new] == [
        {k: v for k, v in r.items() if k != "guide"} for r in rows
    ]
    assert read_rows(out, "validation") == read_rows(guided, "validation")
    assert meta["rationalize"]["counts"] == {
        "rows": 5,
        "guided_in": 4,
        "kept": 2,
        "failed": 1,
        "leaked": 1,
        "resumed": len(finished),
    }
    assert meta["rationalize"]["model"] == "scripted" and meta["rationalized_from"] == read_meta(guided)["data_hash"]
    journal = [json.loads(line) for line in (out / JOURNAL).read_text().splitlines()]
    assert sorted(e["outcome"] for e in journal) == ["failed", "kept", "kept", "leaked"]
    assert next(e for e in journal if e["outcome"] == "leaked")["why"] == "hint"
    assert (guided / "train.jsonl").read_bytes() == before


def test_the_model_sees_the_hint_after_the_last_user_message_only(guided: Path) -> None:
    row = read_rows(guided, "train")[0]
    messages = hinted(row["prompt"], row["guide"], SETTINGS.hint)
    assert messages[:-1] == row["prompt"][:-1] and messages[-1]["role"] == "user"
    note = SETTINGS.hint.replace("{guide}", row["guide"])
    assert messages[-1]["content"] == row["prompt"][-1]["content"] + "\n\n" + note
    assert "{guide}" not in messages[-1]["content"] and row["guide"] in messages[-1]["content"]


def test_bad_input_is_one_clear_error(tmp_path: Path, guided: Path) -> None:
    judge = Judge(RowClient(lambda _: WRONG), None, SETTINGS)  # never asked
    with pytest.raises(UserError, match="not a built dataset"):
        rationalize(tmp_path / "nothing", tmp_path / "out", judge)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "train.jsonl").write_text("")
    with pytest.raises(UserError, match="choose a new directory"):
        rationalize(guided, tmp_path / "full", judge)
    with pytest.raises(UserError, match="no guided training rows"):
        rationalize(OWN1, tmp_path / "out", judge)
