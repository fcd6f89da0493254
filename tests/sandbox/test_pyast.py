"""`sandbox.pyast.parse`: parses one at a time (CPython 3.11's `ast.parse` fails in two threads at
once with "AST constructor recursion depth mismatch", seen in `cobalt eval` of the repair
benchmark), and every parse in the host process goes through it."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from sandbox import pyast

REPO = Path(__file__).resolve().parents[2]


def test_a_parse_waits_while_another_holds_the_lock() -> None:
    done = threading.Event()
    with pyast.LOCK:
        worker = threading.Thread(target=lambda: (pyast.parse("x = 1"), done.set()))
        worker.start()
        assert not done.wait(0.3)  # blocked behind the holder
    worker.join(5)
    assert done.is_set()
    assert pyast.parse("1 + 2", mode="eval").body.op.__class__.__name__ == "Add"


def test_no_host_module_calls_ast_parse_directly() -> None:
    bare = re.compile(r"(?<![\w.])ast\.parse\(")
    found = []
    for package in ("assistant", "trainer", "sandbox"):
        for path in (REPO / package).rglob("*.py"):
            rel = path.relative_to(REPO).as_posix()
            if rel.startswith("sandbox/harness/") or rel == "sandbox/pyast.py":  # the sandbox's own processes
                continue
            found += [f"{rel}:{n}" for n, line in enumerate(path.read_text().splitlines(), 1) if bare.search(line)]
    assert found == []
