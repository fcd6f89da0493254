"""A pytest plugin shipped into the sandbox image (stdlib only): for every test, the first lines
of the functions of one file (the file being debugged) that the test ran, and the lines of that
file it ran, written as JSON {"calls": {node id: [line, ...]}, "lines": {node id: [line, ...]}} to
$COBALT_CALLS_OUT when the session ends. The host ranks functions and lines by how much more the
failing tests run them than the passing ones (assistant/debug/spectrum.py).

Loaded with `-p cobalt_calls` when $COBALT_CALLS_TARGET names the file (a project-relative
path). Calls come from a profile hook; lines from a trace hook that follows only frames of the
target file, and only when no other tracer (coverage, a debugger) is set, so that the project's
own tooling keeps working. A test costs a little more, never fails more.
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
_lines: dict[str, list[int]] = {}


def _collector(hits: set[int]):
    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code.co_filename.endswith(_SUFFIX):
                hits.add(code.co_firstlineno)

    return profile


def _tracer(ran: set[int]):
    def local(frame, event, arg):
        if event == "line":
            ran.add(frame.f_lineno)
        return local

    def trace(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.endswith(_SUFFIX):
            ran.add(frame.f_lineno)
            return local
        return None

    return trace


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _SUFFIX:
        yield
        return
    hits: set[int] = set()
    ran: set[int] = set()
    profile = _collector(hits)
    previous = sys.getprofile()
    sys.setprofile(profile)
    threading.setprofile(profile)
    tracing = sys.gettrace() is None
    if tracing:
        trace = _tracer(ran)
        sys.settrace(trace)
        threading.settrace(trace)
    try:
        yield
    finally:
        sys.setprofile(previous)
        threading.setprofile(None)
        if tracing:
            sys.settrace(None)
            threading.settrace(None)
            _lines[item.nodeid] = sorted(ran)
        _calls[item.nodeid] = sorted(hits)


def pytest_sessionfinish(session, exitstatus):
    if _OUT:
        try:
            with open(_OUT, "w") as fh:
                json.dump({"calls": _calls, "lines": _lines}, fh)
        except OSError:
            pass
