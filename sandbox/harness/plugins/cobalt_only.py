"""A pytest plugin shipped into the sandbox image (stdlib only): when $COBALT_ONLY holds a JSON
list of node ids (`tests/test_a.py::TestX::test_y`), only those of the collected tests run and the
others are deselected, so `cobalt debug`'s search can try an edit on the tests that failed before
running the whole command. When none of the ids matches a collected test, every test runs: a
selection that finds nothing must not look like a run that passed nothing. Loaded with
`-p cobalt_only`.
"""

from __future__ import annotations

import json
import os


def _only() -> frozenset[str]:
    try:
        ids = json.loads(os.environ.get("COBALT_ONLY") or "[]")
    except ValueError:
        return frozenset()
    return frozenset(str(i) for i in ids) if isinstance(ids, list) else frozenset()


_ONLY = _only()


def pytest_collection_modifyitems(config, items):
    if not _ONLY:
        return
    keep = [item for item in items if item.nodeid in _ONLY]
    if not keep:
        return
    dropped = [item for item in items if item.nodeid not in _ONLY]
    items[:] = keep
    config.hook.pytest_deselected(items=dropped)
