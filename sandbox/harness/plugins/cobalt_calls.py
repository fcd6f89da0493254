"""A pytest plugin shipped into the sandbox image (stdlib only): for every test, the first lines
of the functions of one file (the file being debugged) that the test ran, written as JSON
{node id: [line, ...]} to $COBALT_CALLS_OUT when the session ends. The host ranks functions by
how much more the failing tests run them than the passing ones (assistant/debug/spectrum.py).

Loaded with `-p cobalt_calls` when $COBALT_CALLS_TARGET names the file (a project-relative
path); a profile hook sees only Python calls, so a test costs a little more, never fails more.
"""

from __future__ import annotations

import json
import os
import sys
import threading

import pytest

_TARGET = os.environ.get("COBALT_CALLS_TARGET", "")
_OUT = os.environ.get("COBALT_CALLS_OUT", "")
_SUFFIX = os.sep + _TARGET.lstrip("/") if _TARGET else ""
_calls: dict[str, list[int]] = {}


def _collector(hits: set[int]):
    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code.co_filename.endswith(_SUFFIX):
                hits.add(code.co_firstlineno)

    return profile


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _SUFFIX:
        yield
        return
    hits: set[int] = set()
    profile = _collector(hits)
    previous = sys.getprofile()
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)
        threading.setprofile(None)
        _calls[item.nodeid] = sorted(hits)


def pytest_sessionfinish(session, exitstatus):
    if _OUT:
        try:
            with open(_OUT, "w") as fh:
                json.dump(_calls, fh)
        except OSError:
            pass
