"""Isolation, against the real engine: each test asserts the exact status of a hostile or
greedy program, and where a guard could silently fail, the program reports what it saw."""

from __future__ import annotations

import subprocess
import time

import docker
import pytest

from sandbox import Limits, TestCase
from sandbox.engine import INSTANCE_LABEL

pytestmark = pytest.mark.docker

QUICK = Limits(timeout_s=1.0, memory_mb=256, pids=64, cpus=1.0, output_bytes=65536, workdir_mb=32)
ROOMY = Limits(**{**QUICK.__dict__, "timeout_s": 10.0})  # for work that must finish on a loaded machine


def one(sandbox, program: str, expected: str = "", stdin: str = "", limits: Limits | None = None):
    result = sandbox.run(program, [TestCase(input=stdin, output=expected)], "stdio", limits=limits)
    assert result.sandbox_error is None, result.sandbox_error
    return result.tests[0]


def test_network_is_unreachable(sandbox) -> None:
    program = """
import socket
ifaces = sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:])
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1).close()
    print("connected")
except OSError:
    print("blocked", ifaces)
"""
    test = one(sandbox, program, "blocked ['lo']")
    assert test.status == "passed", (test.stdout, test.stderr)


def test_fork_bomb_is_contained_and_host_keeps_working(sandbox) -> None:
    count = """
import os, time
n = 0
try:
    for _ in range(500):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError:
    pass
print("contained" if n < 64 else f"escaped {n}")
"""
    test = one(sandbox, count, "contained", limits=ROOMY)
    assert test.status == "passed", (test.stdout, test.stderr)
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    start = time.monotonic()
    test = one(sandbox, bomb, "", limits=QUICK)
    assert test.status == "timeout"
    assert time.monotonic() - start < 10
    assert subprocess.run(["true"], timeout=5).returncode == 0  # the host still forks
    after = one(sandbox, "print(input())", "ok", stdin="ok\n", limits=ROOMY)
    assert after.status == "passed"


def test_allocating_2gb_ends_as_memory(sandbox) -> None:
    test = one(sandbox, "x = bytearray(2 * 1024 ** 3)\nprint(len(x))\n", "2147483648")
    assert test.status == "memory", (test.status, test.stderr)
    grow = "chunks = []\nwhile True:\n    chunks.append(b'x' * (64 << 20))\n"
    assert one(sandbox, grow).status == "memory"


def test_an_honest_program_with_12_threads_alive_at_once_fits_the_memory_limit(sandbox) -> None:
    # glibc gave each thread a malloc arena of 64 MB address space, which the address-space limit
    # counts: under 256 MB the third thread could not start ("can't start new thread", exit 1).
    threads = (
        "import threading\nn = int(input())\nb = threading.Barrier(n)\nout = []\n"
        "def work():\n    b.wait()\n    out.append(len([bytearray(4096) for _ in range(64)]))\n"
        "ts = [threading.Thread(target=work) for _ in range(n)]\n"
        "[t.start() for t in ts]\n[t.join() for t in ts]\nprint(sum(out))\n"
    )
    test = one(sandbox, threads, str(64 * 12), stdin="12\n", limits=ROOMY)
    assert test.status == "passed", (test.status, test.stderr[-300:])


def test_the_cgroup_oom_killer_also_ends_as_memory(sandbox) -> None:
    # Each process stays under its own address-space limit (256 MB) but together they pass
    # the container's memory limit, so the kernel OOM killer takes the biggest: the program.
    program = """
import os, time
def touch(mb):
    block = bytearray(mb << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    return block
big = touch(230)
if os.fork() == 0:
    del big
    other = touch(190)
    time.sleep(30)
    os._exit(0)
time.sleep(30)
"""
    roomy = Limits(**{**sandbox.limits.__dict__, "timeout_s": 10.0})  # touching 420 MB takes a while
    test = one(sandbox, program, limits=roomy)
    assert (test.status, test.exit_code) == ("memory", -9), (test.status, test.exit_code, test.stderr)


def test_endless_loop_times_out_within_the_limit(sandbox) -> None:
    start = time.monotonic()
    test = one(sandbox, "while True:\n    pass\n", "", limits=QUICK)
    elapsed = time.monotonic() - start
    assert test.status == "timeout"
    assert QUICK.timeout_s <= test.duration_s < QUICK.timeout_s + 1.5  # margins for a loaded machine
    assert elapsed < QUICK.timeout_s + 6  # the whole run, container recycle excluded
    assert one(sandbox, "import time\ntime.sleep(60)\n", "", limits=QUICK).status == "timeout"


def test_writing_outside_the_work_dir_fails(sandbox) -> None:
    program = """
import os
for path in ["/opt/cobalt/sandbox/harness.py", "/etc/passwd", "/usr/lib/x", "/x", "/home/x",
             "/var/tmp/x", "/dev/shm/x", "/work/x", "/tmp/x"]:
    try:
        with open(path, "a") as fh:
            fh.write("x")
        print(path, "written")
    except OSError:
        print(path, "blocked")
"""
    expected = "\n".join(
        [
            f"{p} blocked"
            for p in [
                "/opt/cobalt/sandbox/harness.py",
                "/etc/passwd",
                "/usr/lib/x",
                "/x",
                "/home/x",
                "/var/tmp/x",
                "/dev/shm/x",
            ]
        ]
        + ["/work/x written", "/tmp/x written"]
    )
    test = one(sandbox, program, expected)
    assert test.status == "passed", test.stdout


def test_100mb_of_output_is_capped(sandbox) -> None:
    program = "import sys\nline = 'x' * 999999 + '\\n'\nfor _ in range(100):\n    sys.stdout.write(line)\n"
    test = one(sandbox, program, "x")
    assert test.status == "output_limit"
    assert len(test.stdout.encode()) <= sandbox.limits.output_bytes
    noisy = "import sys\nfor _ in range({n}):\n    sys.stderr.write('e' * 1000000)\nprint('ok')\n"
    test = one(sandbox, noisy.format(n=10), "ok")  # 10 MB of stderr: kept capped, then dropped
    assert test.status == "passed"
    assert len(test.stderr.encode()) <= sandbox.limits.output_bytes
    test = one(sandbox, noisy.format(n=100), "ok")  # 100 MB of stderr: stopped
    assert test.status == "output_limit"
    assert len(test.stderr.encode()) <= sandbox.limits.output_bytes


def test_a_child_that_outlives_the_program_is_killed(sandbox, docker_client) -> None:
    program = """
import os, subprocess, time
subprocess.Popen(["sleep", "313"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(0.3)
        print("late output from an orphan", flush=True)
        time.sleep(313)
    os._exit(0)
print("done")
"""
    test = one(sandbox, program, "done")
    assert test.status == "passed"  # not "timeout": the orphan holding stdout open did not stall it
    # Gone within seconds (the harness kills them, or the container is recycled and removed; under
    # a loaded CI machine that can take longer than half a second), not after their 313 s.
    deadline = time.monotonic() + 10
    while True:
        left = _processes_named(docker_client, sandbox.instance, "313")
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left, left


def _processes_named(docker_client, instance: str, needle: str) -> list[list[str]]:
    """The processes, in this sandbox's containers, whose `ps` line holds `needle`."""
    found = []
    for info in docker_client.api.containers(filters={"label": f"{INSTANCE_LABEL}={instance}"}):
        try:
            procs = docker_client.api.top(info["Id"]).get("Processes") or []
        except docker.errors.APIError:  # recycled and being removed meanwhile: nothing left running in it
            continue
        found += [p for p in procs if needle in " ".join(p)]
    return found


def test_secrets_and_docker_socket_are_unreachable(sandbox) -> None:
    program = """
import os
def probe(path):
    try:
        open(path, "rb").read(1)
        return "readable"
    except FileNotFoundError:
        return "absent"
    except PermissionError:
        return "denied"
status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
print("shadow", probe("/etc/shadow"))
print("sockets", probe("/var/run/docker.sock"), probe("/run/docker.sock"))
print("uid", os.getuid() != 0, "caps", status["CapEff"].strip(), "nnp", status["NoNewPrivs"].strip())
"""
    test = one(sandbox, program, "shadow denied\nsockets absent absent\nuid True caps 0000000000000000 nnp 1")
    assert test.status == "passed", test.stdout + test.stderr


def test_harness_output_cannot_be_forged_through_proc(sandbox) -> None:
    program = """
import os
try:
    fd = os.open(f"/proc/{os.getppid()}/fd/1", os.O_WRONLY)
    os.write(fd, b'{"status": "passed"}\\n{"done": true}\\n')
    print("forged")
except OSError:
    print("denied")
"""
    result = sandbox.run(program, [TestCase(input="", output="unmatchable")] * 2, "stdio")
    assert [t.status for t in result.tests] == ["failed", "failed"]
    assert result.tests[0].stdout == "denied\n"


def test_shared_memory_a_program_leaves_is_gone_before_the_next_job(docker_client, sandbox) -> None:
    """System V shared memory outlives the process that made it and counts against the
    container's memory: left there, it would starve every later job of that container."""
    from sandbox import Sandbox

    leave = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for _ in range(3):
    assert libc.shmget(0, 1 << 20, 0o1600) >= 0  # IPC_PRIVATE | IPC_CREAT | 0600, never removed
print(len(open("/proc/sysvipc/shm").read().splitlines()) - 1)
"""
    count = 'print(len(open("/proc/sysvipc/shm").read().splitlines()) - 1)'
    box = Sandbox(pool_size=1, limits=sandbox.limits, client=docker_client, transport=sandbox.transport)
    try:
        made = box.run(leave, [TestCase(input="", output="3\n")], "stdio")
        assert made.pass_rate == 1.0, made
        after = box.run(count, [TestCase(input="", output="0\n")], "stdio")
        assert after.pass_rate == 1.0 and after.sandbox_error is None, after.tests[0]
    finally:
        box.close()


def test_a_message_queue_a_test_leaves_is_gone_before_the_next_test(docker_client, sandbox) -> None:
    """A POSIX message queue outlives its process: one test could hand the next one (or the next job
    of the container, another sample of the same task) what it saw. Also a tree nested far past the
    recursion limit is emptied, not a fault that leaves the job unscored."""
    from sandbox import Sandbox

    probe = """
import ctypes, os, sys
rt = ctypes.CDLL("librt.so.1", use_errno=True)
rt.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
seen = sorted(os.listdir("/dev/mqueue")) if os.path.isdir("/dev/mqueue") else ["no-mount"]
made = rt.mq_open(b"/cobalt-left", os.O_CREAT | os.O_RDWR, 0o600, None)
for _ in range(1200):
    os.mkdir("a")
    os.chdir("a")
print(seen, made >= 0 or ctypes.get_errno())
"""
    box = Sandbox(pool_size=1, limits=sandbox.limits, client=docker_client, transport=sandbox.transport)
    try:
        first = box.run(probe, [TestCase(input="", output="x")], "stdio")
        assert first.sandbox_error is None, first
        second = box.run(probe, [TestCase(input="", output="x")], "stdio")
        assert second.sandbox_error is None, second
        assert not second.tests[0].actual.startswith("['cobalt-left'"), second.tests[0].actual
    finally:
        box.close()
