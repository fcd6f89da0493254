"""A pytest plugin shipped into the sandbox image (stdlib only): each test may run at most
$COBALT_TEST_TIMEOUT_S seconds. Past it the test fails where it was stopped: a `TestTimeout` is
raised in the running frame by SIGALRM (pytest-timeout's `signal` method), so the traceback's last
frames name the loop that did not end, and the other tests still run. Unset or 0: no limit. Only
Python code in the main thread can be stopped this way; the whole command keeps its outer limit.
Loaded with `-p cobalt_timeout`.
"""

from __future__ import annotations

import os
import signal

import pytest

try:
    _LIMIT = float(os.environ.get("COBALT_TEST_TIMEOUT_S") or 0)
except ValueError:
    _LIMIT = 0.0


class TestTimeout(Exception):
    """A test ran past its own time limit."""

    __test__ = False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if _LIMIT <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def stop(signum, frame):
        raise TestTimeout(f"the test ran longer than its time limit of {_LIMIT:g} s (it hangs here)")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, _LIMIT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
