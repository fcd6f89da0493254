"""Process machinery of the sandbox harness (stdlib only; runs inside the container).

`spawn` forks a child that isolates itself before any untrusted code runs: pipes on fds
0/1/2 plus a private result pipe on fd 3, every other fd closed, its own session, parent
death signal, oom_score_adj 1000, rlimits (address space, CPU, file size, no core), a clean
environment. `supervise` feeds stdin, reads output with caps, enforces the wall-clock
limit, then kills every other process in the container (`kill(-1)`, which spares only the
harness and PID 1) so nothing a test started outlives it. No grading here.
"""

from __future__ import annotations

import ctypes
import os
import resource  # at import time: an extension module costs ~1.5 ms to load per child
import select
import signal
import stat
import time

WORK = "/work"
# One malloc arena: glibc reserves 64 MB of address space per thread arena, which the
# address-space limit counts, so under 256 MB an honest program could not start 3 threads.
CHILD_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "1"}
RECORD_CAP = 1 << 19  # a value test's record holds its value (sandbox/harness/plain.py)
STDERR_DRAIN = 16 << 20  # stderr past the kept bytes is read and dropped, up to this much
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 1, 4, 36
M_ARENA_MAX = -8  # mallopt(3)
_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option: int, value: int) -> None:
    _libc.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))


def wipe(path: str) -> bool:
    """Empty a scratch directory; False if something could not be removed. Flat and iterative: each
    directory under `path` is emptied of its files and its subdirectories are moved up to `path`
    (one rename each, whatever their depth), so a tree nested a thousand deep (a test makes one in
    milliseconds) needs neither recursion, long paths nor a descriptor per level (the container
    allows 1,024), and is removed instead of failing the next job."""
    try:
        root = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    ok, given_up, moved = True, set(), 0
    try:
        while True:
            names = [e.name for e in os.scandir(root) if e.name not in given_up]
            if not names:
                return ok
            for name in names:
                try:
                    st = os.lstat(name, dir_fd=root)
                    if not stat.S_ISDIR(st.st_mode):
                        os.unlink(name, dir_fd=root)
                        continue
                    os.chmod(name, 0o700, dir_fd=root)
                    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=root)
                    try:
                        for entry in list(os.scandir(fd)):
                            if entry.is_dir(follow_symlinks=False):
                                moved = _free_name(root, moved)
                                os.rename(entry.name, f".wipe-{moved}", src_dir_fd=fd, dst_dir_fd=root)
                            else:
                                os.unlink(entry.name, dir_fd=fd)
                    finally:
                        os.close(fd)
                    os.rmdir(name, dir_fd=root)
                except OSError:
                    given_up.add(name)
                    ok = False
    except OSError:
        return False
    finally:
        os.close(root)


def _free_name(root: int, after: int) -> int:
    """The first n > `after` such that `.wipe-<n>` is not taken in the directory `root`."""
    n = after + 1
    while True:
        try:
            os.lstat(f".wipe-{n}", dir_fd=root)
        except FileNotFoundError:
            return n
        n += 1


def remove_mqueues(path: str = "/dev/mqueue") -> None:
    """Unlink every POSIX message queue (a file under the mqueue mount, where there is one): like
    System V IPC, a queue outlives the program, so a test could leave the next test, or the next job
    in this container, what it saw. Best effort: a queue it cannot remove is not a fault."""
    if os.path.isdir(path):
        wipe(path)


IPC_RMID = 0
IPC_KINDS = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))


def remove_ipc() -> bool:
    """Remove every System V IPC object (shared memory, message queues, semaphores) in the
    container's IPC namespace: a program's shared memory outlives it and counts against the
    container's memory, so later jobs there would run out of it. True once none is left."""
    ok = True
    for kind, call in IPC_KINDS:
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) < 2 or not fields[1].isdigit():
                continue
            ident = ctypes.c_int(int(fields[1]))
            if call == "semctl":
                done = _libc.semctl(ident, ctypes.c_int(0), ctypes.c_int(IPC_RMID))
            else:
                done = getattr(_libc, call)(ident, ctypes.c_int(IPC_RMID), ctypes.c_void_p(None))
            ok = ok and done == 0
    return ok


def reap_all(limit_s: float = 2.0) -> bool:
    """Kill every process of ours except PID 1 and this one; True once none is left."""
    me, end = os.getpid(), time.monotonic() + limit_s
    while True:
        try:
            os.kill(-1, signal.SIGKILL)  # atomic over the pid namespace; spares us and PID 1
        except ProcessLookupError:
            pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]:
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.001)


def oom_kills() -> int:
    for path, key in (
        ("/sys/fs/cgroup/memory.events", "oom_kill"),
        ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill"),
    ):
        try:
            with open(path) as fh:
                for line in fh:
                    name, _, value = line.partition(" ")
                    if name == key:
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0


def _isolate(fds: tuple[int, int, int, int], limits: dict, cwd: str, env: dict) -> None:
    """In the child, before any untrusted code: fds, session, rlimits, env."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(4, 1 << 16)
    os.setsid()
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the harness ignores it; a test has Python's
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    prctl(PR_SET_DUMPABLE, 1)
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")  # the OOM killer takes the test, never the harness
    except OSError:
        pass
    if hasattr(_libc, "mallopt"):  # the forked child's malloc is already set up: MALLOC_ARENA_MAX is too late
        _libc.mallopt(M_ARENA_MAX, 1)
    cpu = int(limits["timeout_s"]) + 2
    for rlim, value in (
        (resource.RLIMIT_AS, limits["memory_mb"] << 20),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_FSIZE, limits["workdir_mb"] << 20),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(rlim, (value, value + 1 if rlim == resource.RLIMIT_CPU else value))
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)


def spawn(target, limits: dict, cwd: str = WORK, env: dict | None = None) -> dict:
    """Fork a child that isolates itself and calls `target` (which must not return)."""
    r0, w0 = os.pipe()
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    r3, w3 = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            _isolate((r0, w1, w2, w3), limits, cwd, env or CHILD_ENV)
            target()
        except BaseException as exc:  # setup failed: say so on the test's stderr
            os.write(2, f"sandbox: could not start the test: {exc!r}\n".encode())
        os._exit(125)
    for fd in (r0, w1, w2, w3):
        os.close(fd)
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    return {"pid": pid, "pidfd": pidfd, "stdin": w0, "out": r1, "err": r2, "rec": r3, "start": time.monotonic()}


def supervise(proc: dict, stdin_data: bytes, timeout_s: float, read_cap: int, keep: int) -> dict:
    """Feed stdin, read output with caps until the child exits, the time limit passes or
    output runs over; then kill every other process and reap. Returns the raw outcome."""
    deadline = proc["start"] + timeout_s
    bufs = {proc["out"]: bytearray(), proc["err"]: bytearray(), proc["rec"]: bytearray()}
    caps = {proc["out"]: read_cap + 1, proc["err"]: keep, proc["rec"]: RECORD_CAP}
    seen = dict.fromkeys(bufs, 0)
    poller, pos, exited, why = select.poll(), 0, None, None
    for fd in bufs:
        poller.register(fd, select.POLLIN)
    stdin_fd = proc["stdin"]
    if stdin_data:
        os.set_blocking(stdin_fd, False)
        poller.register(stdin_fd, select.POLLOUT)
    else:
        os.close(stdin_fd)
        stdin_fd = None
    if proc["pidfd"] is not None:
        poller.register(proc["pidfd"], select.POLLIN)
    while exited is None and why is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            why = "timeout"
            break
        wait = remaining if proc["pidfd"] is not None else min(remaining, 0.002)
        for fd, _ in poller.poll(wait * 1000):
            if fd == stdin_fd:
                try:
                    pos += os.write(fd, stdin_data[pos : pos + 65536])
                except BlockingIOError:
                    continue
                except OSError:
                    pos = len(stdin_data)
                if pos >= len(stdin_data):
                    poller.unregister(fd)
                    os.close(fd)
                    stdin_fd = None
            elif fd == proc["pidfd"]:
                exited = os.waitpid(proc["pid"], 0)[1]
            elif not _pump(fd, bufs, caps, seen, poller):
                continue
            if seen[proc["out"]] > read_cap or seen[proc["err"]] > STDERR_DRAIN:
                why = "output_limit"
        if exited is None and proc["pidfd"] is None:
            pid, status = os.waitpid(proc["pid"], os.WNOHANG)
            exited = status if pid else None
    duration = time.monotonic() - proc["start"]
    if exited is None:
        try:
            os.kill(proc["pid"], signal.SIGKILL)
        except ProcessLookupError:
            pass
        exited = os.waitpid(proc["pid"], 0)[1]
    clean = reap_all()
    for fd in bufs:
        os.set_blocking(fd, False)
        while _pump(fd, bufs, caps, seen, None):
            pass
        os.close(fd)
    for fd in (stdin_fd, proc["pidfd"]):
        if fd is not None:
            os.close(fd)
    if seen[proc["out"]] > read_cap:
        why = why or "output_limit"
    return {
        "why": why,
        "code": os.waitstatus_to_exitcode(exited),
        "duration_s": round(duration, 4),
        "out": bytes(bufs[proc["out"]]),
        "err": bytes(bufs[proc["err"]]),
        "rec": bytes(bufs[proc["rec"]]),
        "clean": clean,
    }


def _pump(fd: int, bufs: dict, caps: dict, seen: dict, poller) -> bool:
    """Read one chunk from fd into its buffer (beyond the cap it is dropped, but counted)."""
    try:
        data = os.read(fd, 65536)
    except BlockingIOError:
        return False
    if not data:
        if poller is not None:
            poller.unregister(fd)
        return False
    seen[fd] += len(data)
    room = caps[fd] - len(bufs[fd])
    if room > 0:
        bufs[fd] += data[:room]
    return True
