"""SIGTERM (a `timeout`, a closed terminal, `systemctl stop`) ends a `cobalt solve` or
`cobalt debug` session as `interrupted`, as Ctrl-C does: the command runs in a subprocess on
the real sandbox with a scripted model whose second reply never comes (the model is not
what is tested), and is sent SIGTERM while it waits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assistant.store.trajectory import INTERRUPTED
from assistant.store.trajectory_db import DB_NAME, Store
from tests.assistant.loop_fakes import wait_for_stored_turns

pytestmark = pytest.mark.docker
REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "problems" / "sum-two.yaml"

SCRIPT = """
import sys, time
sys.path[:0] = [{repo!r}, {tests!r}]
from tests.assistant.loop_fakes import ScriptedClient, answer

class Stalls(ScriptedClient):
    def request_kwargs(self, messages):
        if len(self.calls) >= 1:
            time.sleep(600)  # the second reply never comes
        return super().request_kwargs(messages)

client = Stalls([answer({first!r})])
import assistant.serving.connect
assistant.serving.connect.resolve_client = lambda settings, model=None, **kw: client
from assistant.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _project(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'calc'\n")
    (root / "calc.py").write_text("def mul(a, b):\n    return a + b\n")
    (root / "tests" / "test_calc.py").write_text("from calc import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n")
    return root / "calc.py"


@pytest.mark.parametrize("command", ["solve", "debug"])
def test_sigterm_ends_the_session_as_interrupted(command: str, tmp_path: Path) -> None:
    if command == "solve":
        args, first = [str(EXAMPLE), "--json"], "a, b = map(int, input().split())\nprint(a - b)"
    else:
        args, first = (
            [str(_project(tmp_path / "proj")), "--test", "python -m pytest -q"],
            "def mul(a, b):\n    return a - b",
        )
    home = tmp_path / "home"
    script = SCRIPT.format(repo=str(REPO), tests=str(Path(__file__).parents[1]), first=first)
    proc = subprocess.Popen(
        [sys.executable, "-c", script, command, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COBALT_HOME": str(home)},
    )
    db = home / DB_NAME
    try:
        wait_for_stored_turns(proc, db, 1)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.5)  # now waiting for the second reply
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "interrupted" in err
    assert "Traceback" not in err
    with Store(db) as store:
        (record,) = store.sessions(with_turns=True)
    assert record.status == INTERRUPTED and len(record.turns) == 1
