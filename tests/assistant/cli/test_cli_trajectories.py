"""`cobalt trajectories list|show|export|import|stats` on a real store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.store.trajectory_db import Store
from tests.assistant.store.test_store import _fill


@pytest.fixture
def filled(cobalt_home: Path) -> Path:
    with Store.open() as store:
        _fill(store)
    return cobalt_home


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_list_show_and_stats_as_json(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _json(capsys, ["trajectories", "list", "--json"])
    assert [(r["model"], r["status"], r["turns"]) for r in rows] == [
        ("model-a", "passed", 2),
        ("model-a", "unsolved", 3),
        ("model-b", "passed", 1),
        ("model-b", "running", 0),
    ]
    assert [r["hidden_pass_rate"] for r in rows] == [1.0, 0.0, 0.5, 0.0]  # the last turn's, without loading turns
    assert len(_json(capsys, ["trajectories", "list", "--json", "--model", "model-b", "--limit", "1"])) == 1
    shown = _json(capsys, ["trajectories", "show", rows[0]["id"][:8], "--json"])
    assert shown["id"] == rows[0]["id"] and len(shown["turns"]) == 2
    assert shown["turns"][0]["reply"].startswith("<think>") and shown["problem"]["id"] == "sum-two"
    summary = _json(capsys, ["trajectories", "stats", "--json", "--model", "model-a"])
    assert summary["sessions"] == 2 and summary["groups"][0]["solved_by_turn"] == [0.0, 0.5, 0.5]


def test_human_readable_output(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trajectories", "list"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("ID") and len(out.splitlines()) == 5
    assert main(["trajectories", "stats"]) == 0
    out = capsys.readouterr().out
    assert "4 sessions · 6 turns · 2 problems" in out and "solved by" in out
    rows = json.loads((main(["trajectories", "list", "--json"]), capsys.readouterr().out)[1])
    assert main(["trajectories", "show", rows[1]["id"]]) == 0
    out = capsys.readouterr().out
    assert out.count("── turn") == 3 and "feedback 2" in out


def test_export_then_import_elsewhere_is_identical(
    filled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first.jsonl"
    assert main(["trajectories", "export", "--out", str(first)]) == 0
    assert "wrote 2 record(s) (3 sessions)" in capsys.readouterr().err
    other = tmp_path / "other-home"
    other.mkdir()
    monkeypatch.setenv("COBALT_HOME", str(other))
    assert main(["trajectories", "import", str(first)]) == 0
    assert "imported 3 session(s); 0 already stored" in capsys.readouterr().out
    assert main(["trajectories", "export"]) == 0
    assert capsys.readouterr().out == first.read_text()
    assert main(["trajectories", "export", "--model", "model-b"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1


def test_bad_input_is_one_sentence_and_writes_nothing(
    cobalt_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "instruction": "i", "public_test_cases": "{}", "conversations": []}\n')
    assert main(["trajectories", "import", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("cobalt: error: ") and "bad.jsonl:1" in err and err.count("\n") == 1
    assert main(["trajectories", "import", str(tmp_path / "missing.jsonl")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["trajectories", "show", "nope"]) == 1
    assert "no stored session has the id 'nope'" in capsys.readouterr().err
    with Store.open() as store:
        assert store.counts() == (0, 0)


def test_every_source_the_product_writes_can_be_filtered(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trainer.repair.curriculum import SOURCE

    for source in (SOURCE, "bench", "eval"):
        assert _json(capsys, ["trajectories", "list", "--json", "--source", source]) == []


def test_export_to_a_missing_folder_is_one_sentence(
    filled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trajectories", "export", "--out", str(tmp_path / "missing" / "x.jsonl")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("cobalt: error: cannot write") and err.count("\n") == 1


def test_a_reader_that_leaves_early_ends_the_export_quietly(filled: Path) -> None:
    """`cobalt trajectories export | head -1`: no BrokenPipeError traceback."""
    env = dict(os.environ, COBALT_HOME=str(filled))
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant.cli", "trajectories", "export"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and "Traceback" not in err and "BrokenPipe" not in err
