"""`cobalt tui [PROBLEM]` and `cobalt` alone: registered, documented, and one clear
sentence (not a traceback) when there is no terminal to draw on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.cli import build_parser, main


def _cobalt(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, COBALT_HOME=str(home))
    env.pop("COBALT_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "assistant.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_tui_command_is_registered_with_its_options() -> None:
    args = build_parser().parse_args(["tui", "examples/problems/sum-two.yaml", "--model", "tiny", "--turns", "2"])
    assert (args.problem, args.model, args.turns) == ("examples/problems/sum-two.yaml", "tiny", 2)
    assert build_parser().parse_args(["tui"]).problem is None


def test_without_a_terminal_tui_says_so(cobalt_home: Path) -> None:
    proc = _cobalt("tui", home=cobalt_home)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "cobalt: error: the TUI needs a terminal; use `cobalt solve PROBLEM` for a headless run"
    )


def test_cobalt_alone_without_a_terminal_prints_help(cobalt_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0  # pytest's stdin is no terminal
    out = capsys.readouterr().out
    assert "usage: cobalt" in out and "tui" in out
