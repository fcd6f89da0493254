"""Container lifecycle and bad input against the real engine: orphans, an owner killed with
SIGKILL, no engine, no image, programs that are not UTF-8 or not Python, run_many."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox import Job, Limits, Sandbox, SandboxError, TestCase
from sandbox.engine import INSTANCE_LABEL, LABEL, OWNER_LABEL, owned_containers, owner_id

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]


def wait_until_gone(client, owner: str, timeout_s: float = 60.0) -> list[dict]:
    deadline = time.monotonic() + timeout_s
    while owned_containers(client, owner) and time.monotonic() < deadline:
        time.sleep(0.2)
    return owned_containers(client, owner)


def test_orphans_of_dead_owners_are_removed_at_start_up(docker_client, sandbox) -> None:
    dead = f"{owner_id().rsplit(':', 2)[0]}:999999999:1"
    alive = owner_id(os.getppid())  # a live neighbour's container must survive
    ids = [
        docker_client.api.create_container(sandbox.image, command=["sleep", "60"], labels={LABEL: "1", OWNER_LABEL: o})[
            "Id"
        ]
        for o in (dead, alive)
    ]
    try:
        box = Sandbox(pool_size=1, limits=sandbox.limits, client=docker_client)
        box.close()
        assert box.orphans_removed >= 1
        assert not owned_containers(docker_client, dead)
        assert [c["Id"] for c in owned_containers(docker_client, alive)] == [ids[1]]
    finally:
        for cid in ids:
            try:
                docker_client.api.remove_container(cid, force=True)
            except Exception:  # noqa: BLE001 - already removed
                pass


@pytest.mark.parametrize("transport", ["attach", "exec"])
def test_no_container_survives_a_sigkilled_owner(docker_client, transport: str) -> None:
    # The owner also forks a child that outlives it: the child must not keep containers alive.
    script = (
        "import os, time\n"
        "from sandbox import Sandbox, TestCase, Limits\n"
        f"box = Sandbox(pool_size=2, concurrency=2, transport={transport!r}).warm()\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    time.sleep(120)\n"
        "    os._exit(0)\n"
        "print(box.owner, child, flush=True)\n"
        "box.run('import time\\nprint(1, flush=True)\\ntime.sleep(120)', [TestCase(input='', output='')],"
        " limits=Limits(timeout_s=120))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        owner, child_pid = proc.stdout.readline().split()
        child = int(child_pid)
        time.sleep(1.0)  # the long job is now running inside a container
        assert len(owned_containers(docker_client, owner)) == 2
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    try:
        assert wait_until_gone(docker_client, owner) == []
    finally:
        if child:
            os.kill(child, signal.SIGKILL)


def test_no_engine_is_one_clear_error(monkeypatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    with pytest.raises(SandboxError, match=r"cannot reach the Docker engine at tcp://127\.0\.0\.1:9 .*start dockerd"):
        Sandbox()


def test_missing_image_says_how_to_build_it(docker_client) -> None:
    with pytest.raises(SandboxError, match=r"cobalt-sandbox:no-such-tag is missing: run `cobalt sandbox build`"):
        Sandbox(image="cobalt-sandbox:no-such-tag", client=docker_client)


def test_programs_that_are_not_utf8_or_not_python_are_errors(sandbox) -> None:
    tests = [TestCase(input="", output="1\n"), TestCase(input="", output="2\n")]
    for program in (b"\xff\xfeprint(1)\n", "print('\udc80')\n"):
        result = sandbox.run(program, tests, "stdio")
        assert [t.status for t in result.tests] == ["error", "error"]
        assert "not valid UTF-8" in result.compile_error
    for program in ("int main(void) { return 0; }\n", "print(1\n", "x = 1\x00\n"):
        result = sandbox.run(program, tests, "stdio")
        assert [t.status for t in result.tests] == ["error", "error"], result
        assert result.compile_error and result.sandbox_error is None
    assert 'File "solution.py", line 1' in sandbox.run("int main(void) { }", tests, "stdio").compile_error


def test_caller_mistakes_raise_value_error(sandbox) -> None:
    with pytest.raises(ValueError, match="unknown test kind"):
        sandbox.run("print(1)", [], "cobol")
    with pytest.raises(ValueError, match="no expected output"):
        sandbox.run("print(1)", [TestCase(input="1")], "stdio")
    with pytest.raises(ValueError, match="needs a project"):
        sandbox.run("print(1)", [], "pytest")


def test_run_many_keeps_order_and_survives_bad_programs(sandbox) -> None:
    quick = Limits(timeout_s=1.0, memory_mb=256, pids=64, cpus=1.0, output_bytes=65536, workdir_mb=32)
    jobs = [
        Job(f"print(int(input()) * {k})", [TestCase(input=f"{i}\n", output=f"{i * k}\n") for i in range(3)])
        for k in range(8)
    ]
    jobs[2] = Job("while True: pass", [TestCase(input="", output="")], limits=quick)
    jobs[5] = Job("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)", [TestCase(input="", output="")])
    # SIGINT to the harness used to raise KeyboardInterrupt there: a fault, so a wrong program went unscored
    jobs[6] = Job("import os, signal\nos.kill(os.getppid(), signal.SIGINT)", [TestCase(input="", output="1\n")])
    results = sandbox.run_many(jobs)
    seen = [(r.pass_rate, [t.status for t in r.tests], r.compile_error, r.sandbox_error) for r in results]
    assert [r.pass_rate for r in results] == [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0], seen
    assert results[2].tests[0].status == "timeout" and results[5].tests[0].status == "error"
    assert results[6].tests[0].status == "failed"
    assert all(r.sandbox_error is None for r in results)


@pytest.mark.parametrize("transport", ["attach", "exec"])
def test_a_syntax_error_leaves_its_container_fit_for_the_next_job(
    docker_client, sandbox, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compile error ends the job before its test frames are read; left unread, the container's
    PID 1 took them for the next job's header and died, and the next job in it was a sandbox fault
    (hidden by the retry, but a fault again when the retry met another such container)."""
    import sandbox.backend as backend

    faults: list[str] = []

    def watched(job, out, err):  # the real grading; only its faults are noted
        outcome = assemble(job, out, err)
        if outcome.fault is not None:
            faults.append(outcome.fault)
        return outcome

    assemble = backend.assemble
    monkeypatch.setattr(backend, "assemble", watched)
    box = Sandbox(pool_size=1, limits=sandbox.limits, client=docker_client, transport=transport)
    tests = [TestCase(input=f"{i}\n", output=f"{i}\n") for i in range(3)]
    try:
        for program in ("print(1\n", "def f(:\n", "print(input())"):
            result = box.run(program, tests, "stdio")
            assert result.sandbox_error is None
        assert result.pass_rate == 1.0
        checks = [TestCase(code="assert f(2) == 2"), TestCase(code="assert f(3) == 3")]
        assert box.run("def f(:\n", checks, "function").compile_error
        assert box.run("def f(x):\n    return x\n", checks, "function").pass_rate == 1.0
    finally:
        box.close()
    assert faults == []


def test_containers_are_recycled_after_max_jobs(docker_client, sandbox) -> None:
    box = Sandbox(pool_size=1, max_jobs_per_container=2, limits=sandbox.limits, client=docker_client)
    try:
        seen = set()
        for _ in range(5):
            assert box.run("print(1)", [TestCase(input="", output="1")]).pass_rate == 1.0
            mine = docker_client.api.containers(filters={"label": f"{INSTANCE_LABEL}={box.instance}"})
            seen |= {c["Id"] for c in mine}
        assert len(seen) >= 3  # jobs 1-2, 3-4, 5: three containers
    finally:
        box.close()


def test_ctrl_c_during_run_many_drops_the_jobs_not_started(sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in a batch: the executor used to run every queued job to the end before the
    interrupt reached the caller (minutes of a training batch)."""
    import threading

    started: list[int] = []
    lock = threading.Lock()

    def run(program: str, *args: object) -> None:
        with lock:
            started.append(len(started))
            first = len(started) == 1
        if first:
            raise KeyboardInterrupt
        time.sleep(0.2)

    monkeypatch.setattr(sandbox, "run", run)
    monkeypatch.setattr(sandbox, "concurrency", 1)
    with pytest.raises(KeyboardInterrupt):
        sandbox.run_many([Job("print(1)", [TestCase(input="", output="1")]) for _ in range(20)])
    assert len(started) <= 2
