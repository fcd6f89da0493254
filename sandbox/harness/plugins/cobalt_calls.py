"""A pytest plugin shipped into the sandbox image (stdlib only): for every test, the first lines
of the functions of one file (the file being debugged) that the test ran, and the lines of that
file it ran, written as JSON {"calls": {node id: [line, ...]}, "lines": {node id: [line, ...]}} to
$COBALT_CALLS_OUT when the session ends. The host ranks functions and lines by how much more the
failing tests run them than the passing ones (assistant/debug/spectrum.py).

Loaded with `-p cobalt_calls` when $COBALT_CALLS_TARGET names the file (a project-relative
path). With `*` it follows every file under $COBALT_CALLS_ROOT (the project) outside
site-packages and writes {"files": {path: {"calls": ..., "lines": ...}}}: `cobalt debug` without
FILE learns which file the failures point at and each test's lines in it from one run. Calls
come from a profile hook; lines from a trace hook that follows only frames of the followed
files, and only when no other tracer (coverage, a debugger) is set, so that the project's
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
_EVERY = _TARGET == "*"
_ROOT = os.path.join(os.path.realpath(os.environ.get("COBALT_CALLS_ROOT", os.getcwd())), "")
_SUFFIX = os.sep + _TARGET.lstrip("/") if _TARGET and not _EVERY else ""
_calls: dict[str, dict[str, list[int]]] = {}  # node id -> file -> lines
_lines: dict[str, dict[str, list[int]]] = {}
_files: dict[str, str | None] = {}  # co_filename -> its project-relative path, or None when not followed


def _followed(filename: str) -> str | None:
    """The project-relative path of a followed file (the target, or with `*` any project file)."""
    if filename not in _files:
        if not _EVERY:
            _files[filename] = _TARGET if filename.endswith(_SUFFIX) else None
        else:
            real = os.path.realpath(filename)
            inside = real.startswith(_ROOT) and "site-packages" not in real and real != os.path.realpath(__file__)
            _files[filename] = os.path.relpath(real, _ROOT).replace(os.sep, "/") if inside else None
    return _files[filename]


def _collector(hits: dict[str, set[int]]):
    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            path = _followed(code.co_filename)
            if path is not None:
                hits.setdefault(path, set()).add(code.co_firstlineno)

    return profile


def _tracer(ran: dict[str, set[int]]):
    def follow(into: set[int]):
        def local(frame, event, arg):
            if event == "line":
                into.add(frame.f_lineno)
            return local

        return local

    def trace(frame, event, arg):
        if event == "call":
            path = _followed(frame.f_code.co_filename)
            if path is not None:
                into = ran.setdefault(path, set())
                into.add(frame.f_lineno)
                return follow(into)
        return None

    return trace


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _SUFFIX and not _EVERY:
        yield
        return
    hits: dict[str, set[int]] = {}
    ran: dict[str, set[int]] = {}
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
            _lines[item.nodeid] = {path: sorted(found) for path, found in ran.items()}
        _calls[item.nodeid] = {path: sorted(found) for path, found in hits.items()}


def _report() -> dict:
    """{"calls": {node: lines}, "lines": ...} of the target; with `*`, {"files": {path: that}}."""
    if not _EVERY:
        return {key: {node: by.get(_TARGET, []) for node, by in found.items()} for key, found in _pairs()}
    files: dict[str, dict] = {}
    for key, found in _pairs():
        for node, by in found.items():
            for path, lines in by.items():
                files.setdefault(path, {"calls": {}, "lines": {}})[key][node] = lines
    return {"files": files}


def _pairs() -> list[tuple[str, dict[str, dict[str, list[int]]]]]:
    return [("calls", _calls), ("lines", _lines)]


def pytest_sessionfinish(session, exitstatus):
    if _OUT:
        try:
            with open(_OUT, "w") as fh:
                json.dump(_report(), fh)
        except OSError:
            pass
