"""The served model's pace from its own streamed replies, kept per endpoint, and the prompt it allows;
through `cobalt debug` on a real project in the real sandbox: the prompt cut to the time left, the
reply held to the functions shown."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from assistant.debug.turn_pace import Pace, PaceBook, measured
from assistant.messages.shapes import ChatResult
from assistant.settings_loader import load_settings
from assistant.store.trajectory_db import Store
from tests.assistant.cli.test_cli_solve import use_model
from tests.assistant.debug.projects import CRASHING, MEAN_FIXED, stats_project
from tests.assistant.loop_fakes import ScriptedClient, answer


def _reply(prompt: int, completion: int, first_s: float | None, total_s: float) -> ChatResult:
    return ChatResult("```python\nx = 1\n```", prompt, completion, total_s, "fence", first_s)


def test_a_streamed_reply_gives_both_rates_and_its_length() -> None:
    # 1400 prompt tokens before the first token at 40 s, 200 more reply tokens in the next 25 s
    assert measured(_reply(1400, 201, 40.0, 65.0)) == Pace(prompt_tps=35.0, reply_tps=8.0, reply_tokens=201.0)


@pytest.mark.parametrize(
    "reply",
    [
        _reply(1400, 200, None, 65.0),  # not streamed: no time to the first token
        _reply(0, 13, 0.1, 0.2),  # cut at its fence: no usage, and no count of ours given
        _reply(1400, 1, 40.0, 40.5),  # one token: no writing pace
        _reply(1400, 200, 40.0, 40.0),  # nothing after the first token
    ],
)
def test_a_reply_that_cannot_tell_its_pace_is_not_measured(reply: ChatResult) -> None:
    assert measured(reply) is None


def test_a_reply_cut_at_its_fence_is_measured_with_our_own_count_of_its_prompt() -> None:
    assert measured(_reply(0, 201, 40.0, 65.0), prompt_tokens=1400) == Pace(35.0, 8.0, 201.0)
    assert measured(_reply(700, 201, 40.0, 65.0), prompt_tokens=1400) == Pace(17.5, 8.0, 201.0)  # the server's wins


def test_the_book_blends_turns_keeps_them_on_disk_and_survives_a_damaged_file(tmp_path: Path) -> None:
    book = PaceBook.for_endpoint(tmp_path, "qwen-coder-1.5b", "http://127.0.0.1:8011/v1")
    assert book.pace is None and book.prompt_cap(60.0, 200) is None  # nothing measured: nothing cut
    book.observe(_reply(1400, 201, 40.0, 65.0))
    book.observe(_reply(0, 13, 0.1, 0.2))  # cannot tell: ignored
    book.observe(_reply(1000, 101, 10.0, 20.0))  # 100 tok/s reading, 10 writing
    assert book.pace == Pace(prompt_tps=52.5, reply_tps=9.0, reply_tokens=151.0)  # reading counted as 2 x 35 at most
    book.observe(_reply(1000, 101, 1000.0, 1010.0))  # 1 tok/s reading: counted as a quarter of 52.5
    assert book.pace is not None and book.pace.prompt_tps == pytest.approx((52.5 + 52.5 / 4) / 2)
    again = PaceBook.for_endpoint(tmp_path, "qwen-coder-1.5b", "http://127.0.0.1:8011/v1")
    assert again.pace == book.pace  # a fresh `cobalt debug` starts from it
    other = PaceBook.for_endpoint(tmp_path, "qwen-coder-1.5b", "http://127.0.0.1:8012/v1")
    assert other.pace is None and other.path != book.path  # another server is measured on its own
    assert book.path is not None
    book.path.write_text("{not json")
    assert PaceBook(book.path).pace is None
    for damaged in ({"prompt_tps": 0}, {"prompt_tps": "a"}, {"prompt_tps": float("inf")}, {"speed": 1.0}):
        book.path.write_text(json.dumps({"prompt_tps": 35.0, "reply_tps": 8.0, "reply_tokens": 1.0, **damaged}))
        assert PaceBook(book.path).pace is None  # zero divides, a string or infinity cannot be a cap
    book.path.write_text("[1, 2]")
    assert PaceBook(book.path).pace is None


def test_the_cap_pays_for_a_typical_reply_first_and_is_never_negative(tmp_path: Path) -> None:
    book = PaceBook(None)
    book.observe(_reply(1400, 201, 40.0, 65.0))  # 35 tok/s reading, 8 writing, replies of 201
    assert book.prompt_cap(45.0, 400) == int((45.0 - 201 / 8.0) * 35.0)  # the typical reply is shorter
    assert book.prompt_cap(45.0, 81) == int((45.0 - 81 / 8.0) * 35.0)  # the reply may not be longer than 81
    assert book.prompt_cap(10.0, 400) == 0 and book.prompt_cap(-5.0, 400) == 0
    assert book.path is None and not list(tmp_path.iterdir())  # a book without a file writes none


class Asked(ScriptedClient):
    """A scripted model that also keeps each request's `max_tokens`."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.max_tokens_asked: list[int | None] = []

    def chat(self, messages: Any, **kwargs: Any) -> ChatResult:
        self.max_tokens_asked.append(kwargs.get("max_tokens"))
        return super().chat(messages, **kwargs)


def _debug(monkeypatch: pytest.MonkeyPatch, project: Path) -> tuple[Asked, dict[str, Any]]:
    """One `cobalt debug` of the stats project, its model fixing `mean`: the client and the stored meta."""
    client = Asked([answer(MEAN_FIXED)])
    use_model(monkeypatch, client)
    assert main(["debug", str(project / "pkg" / "stats.py"), "--test", "python -m pytest -q", "--no-search"]) == 0
    with Store.open() as store:
        meta = store.session(store.sessions()[-1].id).meta  # the newest
    return client, meta


@pytest.mark.docker
def test_a_slow_pace_cuts_the_prompt_a_fast_one_does_not_and_the_reply_is_held_to_the_functions(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = stats_project(tmp_path / "stats")
    unpaced, meta = _debug(monkeypatch, project)
    full = unpaced.calls[0]["messages"][1]["content"]
    assert "prompt_caps" not in meta and "`ratio` (lines 1-2)" in full  # no pace measured: nothing cut
    assert unpaced.max_tokens_asked == [256]  # two one-line functions: the cap's floor
    book = PaceBook.for_endpoint(load_settings().paths.data_dir, "scripted", None)
    assert book.pace is not None and book.pace.reply_tokens == 22.0  # the fence-cut reply was measured
    assert book.path is not None
    book.path.write_text(json.dumps(asdict(Pace(prompt_tps=1.0, reply_tps=10.0, reply_tokens=40.0))))
    paced, meta = _debug(monkeypatch, project)
    cut = paced.calls[0]["messages"][1]["content"]
    ((caps),) = meta["prompt_caps"]
    assert caps["turn"] == 0 and 0 < caps["cap"] < 90 and caps["left_s"] <= 90  # about 85 s at 1 token/s
    assert len(cut) < len(full) and "`mean` (lines 5-6)" in cut and "`ratio` (lines 1-2)" not in cut
    book.path.write_text(json.dumps(asdict(Pace(prompt_tps=1e6, reply_tps=1e3, reply_tokens=40.0))))
    fast, meta = _debug(monkeypatch, project)
    assert fast.calls[0]["messages"][1]["content"] == full and meta["prompt_caps"][0]["cap"] > 10**7
    monkeypatch.setenv("COBALT__DEBUG__REPLY_SCALE", "20")
    scaled, _ = _debug(monkeypatch, project)
    shown = sum(len(f) // 3 + 1 for f in ("def ratio(a, b):\n    return a / b\n", CRASHING.split("\n\n\n")[1]))
    assert scaled.max_tokens_asked == [20 * shown + 64]  # both functions shown in full, no tokenizer here
    monkeypatch.setenv("COBALT__DEBUG__REPLY_SCALE", "0")
    monkeypatch.setenv("COBALT__DEBUG__PACED", "false")
    plain, meta = _debug(monkeypatch, project)
    assert "prompt_caps" not in meta and plain.max_tokens_asked == [load_settings().loop.max_tokens]
