"""PID 1 of a sandbox container (stdlib only; shipped into the image). Two flavours:

`serve` (the default pool transport): a warm, clean fork server. Whenever a job arrives on
stdin it forks one worker that runs the whole job (`harness.run`: all tests of one program,
a child per test) and writes the results on stdout; this process itself never reads job
data, so no job can find another's tests in its memory. If a worker dies mid-job (e.g. the
program killed its parent) it says so on stdout and exits, and the host recycles the
container. Being PID 1 of the namespace, it cannot be signalled from inside; being
non-dumpable, it cannot be ptraced or have its fds opened through /proc.

`watchdog` (for the `docker exec` transport): only waits for EOF on stdin.

Either way stdin is an attach socket the owning host process keeps open (stdin_once +
auto-remove), so when that process dies, even by SIGKILL, stdin hangs up, PID 1 exits and
the container removes itself.
"""

from __future__ import annotations

import os
import select
import signal
import sys
from typing import Callable

from sandbox.harness.proc import PR_SET_DUMPABLE, prctl

HANGUP = select.POLLHUP | select.POLLERR | select.POLLNVAL


def _ignore_signals(keep: tuple = ()) -> None:
    for sig in signal.valid_signals():
        if sig in keep:
            continue
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError):
            pass


def _python_signals() -> None:
    """The dispositions a fresh `python3` has, for a worker and the tests it forks."""
    for sig in signal.valid_signals():
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_IGN)


def watchdog() -> None:
    prctl(PR_SET_DUMPABLE, 0)
    _ignore_signals()  # SIGCHLD ignored too: orphans are reaped automatically
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    while True:
        try:
            if not os.read(0, 65536):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    os._exit(0)


def _stdin_ready() -> bool:
    """Block until a job arrives (True) or stdin hangs up (False)."""
    poller = select.poll()
    poller.register(0, select.POLLIN)
    while True:
        for _, events in poller.poll():
            if events & select.POLLIN:
                return True
            if events & HANGUP:
                return False


def _wait_worker(pid: int) -> int | None:
    """The worker's exit code, or None if stdin hung up first (the owner is gone)."""
    poller = select.poll()
    poller.register(0, 0)  # no events asked: only a hang-up is reported
    try:
        pidfd = os.pidfd_open(pid)
        poller.register(pidfd, select.POLLIN)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while True:
            events = dict(poller.poll(None if pidfd is not None else 20))
            if events.get(0, 0) & HANGUP:
                return None
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def serve(run_job: Callable[[], None]) -> None:
    prctl(PR_SET_DUMPABLE, 0)
    _ignore_signals(keep=(signal.SIGCHLD,))
    while _stdin_ready():
        worker = os.fork()
        if worker == 0:
            _python_signals()
            code = 0
            try:
                run_job()
            except BaseException:  # a harness bug: the host reads stderr and retries elsewhere
                import traceback

                traceback.print_exc()
                code = 1
            sys.stderr.flush()
            os._exit(code)
        code = _wait_worker(worker)
        if code is None:
            break
        while True:  # orphans the worker left (normally none: it kills them per test)
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if code != 0:
            os.write(1, b'\n{"worker_died": %d}\n' % code)
            break
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os._exit(0)
