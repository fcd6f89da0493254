"""`sandbox.runtime`: the same honest programs of each kind (stdio, function, pytest) get the
same results through the warm pool under gVisor (runsc) as under the default runc; the
containers really run under runsc; a runtime the engine does not know is one sentence. The
runsc tests skip only when runsc is not registered with the engine (scripts/register-runsc.sh,
run by `make setup-test`, registers it where it can)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from sandbox import Job, Project, Sandbox, SandboxError, TestCase
from sandbox.engine import INSTANCE_LABEL, engine_runtimes
from sandbox.sandbox_settings import SandboxSettings
from tests.sandbox.cases import assert_cases, bench_argv, calc_project, stdio_cases
from tests.sandbox.conftest import LIMITS

pytestmark = pytest.mark.docker

ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
STDIO = stdio_cases(("1 2\n", "3\n"), ("20 22\n", "42\n"), ("2 2\n", "5\n"))
TWICE = "def twice(x):\n    return x * 2\n"
FUNCTION = assert_cases(
    "assert twice(2) == 4",
    "assert twice('ab') == 'abab'",
    "assert twice(3) == 7",
    "assert twice([1]) == [1, 1]\nassert twice(0) == 0",
)
THREADS = (
    "import threading\nout = []\nts = [threading.Thread(target=out.append, args=(i,)) for i in range(8)]\n"
    "[t.start() for t in ts]\n[t.join() for t in ts]\nprint(sum(out) + int(input()))\n"
)


def pytest_project(root: Path) -> Project:
    tests = (
        "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\n"
        "def test_neg():\n    assert add(-1, -1) == -3\n\n"
        "class TestMore:\n    def test_zero(self):\n        assert add(0, 0) == 0\n"
    )
    return Project(str(calc_project(root, tests)), "calc.py")


def outcome(result) -> list[tuple]:
    assert result.sandbox_error is None, result.sandbox_error
    assert not result.tampered
    return [(t.name, t.status, t.actual, t.exit_code) for t in result.tests]


def open_box(docker_client, runtime: str | None) -> Sandbox:
    return Sandbox.from_config(
        SandboxSettings(), runtime=runtime, pool_size=2, concurrency=2, limits=LIMITS, client=docker_client
    )


@pytest.fixture(scope="module")
def runsc(docker_client):
    if "runsc" not in engine_runtimes(docker_client):
        pytest.skip(
            "runsc (gVisor) is not registered with the Docker engine (`docker info` lists no runsc "
            "runtime); run scripts/register-runsc.sh as root"
        )
    with open_box(docker_client, "runsc") as box:
        box.warm()
        yield box


def test_honest_programs_get_the_same_results_under_runsc_as_under_runc(runsc, docker_client, tmp_path) -> None:
    project = pytest_project(tmp_path / "proj")
    jobs = [
        Job(ADD, STDIO),
        Job(THREADS, [TestCase(input="2\n", output="30\n")]),
        Job(TWICE, FUNCTION, "function"),
        Job("def add(a, b):\n    return a + b\n", [], "pytest", project=project),
    ]
    with open_box(docker_client, None) as runc:
        runc.warm()  # warmed like the runsc box (the threads job once failed in CI: glibc arenas, see harness/proc.py)
        expected = [outcome(r) for r in runc.run_many(jobs)]
    got = [outcome(r) for r in runsc.run_many(jobs)]
    assert got == expected
    statuses = [[status for _name, status, *_ in job] for job in got]
    assert statuses == [
        ["passed", "passed", "failed"],
        ["passed"],
        ["passed", "passed", "failed", "passed"],
        ["passed", "failed", "passed"],
    ]
    ours = runsc.client.api.containers(filters={"label": f"{INSTANCE_LABEL}={runsc.instance}"})
    assert ours and {runsc.client.api.inspect_container(c["Id"])["HostConfig"]["Runtime"] for c in ours} == {"runsc"}


def test_a_fork_bomb_under_runsc_is_a_sandbox_fault_and_the_pool_recovers(runsc) -> None:
    """Known difference: gVisor's own threads count in the container's pids cgroup, so a fork
    bomb that exhausts it stops the whole gVisor sandbox (reported as a sandbox fault, which
    callers drop, never a pass); under runc the program's fork fails instead."""
    bomb = "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(0.01)\n"
    result = runsc.run(bomb, [TestCase(input="", output="never\n")], "stdio")
    assert result.pass_rate == 0.0 and not result.tests[0].passed
    assert result.sandbox_error is not None or result.tests[0].status == "timeout", result  # runsc 20221219: the former
    assert outcome(runsc.run(ADD, STDIO[:1], "stdio"))[0][1] == "passed"


def test_an_unknown_runtime_is_one_sentence(docker_client) -> None:
    with pytest.raises(SandboxError) as err:
        open_box(docker_client, "no-such-runtime")
    text = str(err.value)
    assert text.startswith("the Docker engine has no runtime 'no-such-runtime'") and "\n" not in text
    assert "/etc/docker/daemon.json" in text


def test_bench_compares_runsc_with_runc_in_the_same_run(runsc, capsys) -> None:
    from assistant.cli import main

    options = (
        "--programs 2 --tests 2 --per-test-programs 1 --per-program-programs 1 --concurrency 1 --runtime-compare 1"
    )
    assert main(bench_argv(options)) == 0
    report = json.loads(capsys.readouterr().out)
    runtime = report["runtime"]
    assert report["all_correct"] is True and runtime["compared"] == "runsc"
    assert [r["way"] for r in runtime["rows"]] == [
        "pool stdio, runc",
        "pool stdio, runsc",
        "pool function, runc",
        "pool function, runsc",
        "docker run/program, runc",
        "docker run/program, runsc",
    ]
    assert [r["passed"] for r in runtime["rows"]] == [r["tests"] for r in runtime["rows"]] == [4, 4, 4, 4, 2, 2]
    assert set(runtime["ratios"]) == {
        "pool_stdio_runsc_vs_runc",
        "pool_function_runsc_vs_runc",
        "docker_run_per_program_runsc_vs_runc",
    }
    assert set(runtime["warmup_s"]) == {"runc", "runsc"}


def test_register_script_merges_daemon_json_and_is_idempotent(tmp_path) -> None:
    if os.geteuid() != 0 or not os.access("/usr/bin/runsc", os.X_OK):
        pytest.skip("scripts/register-runsc.sh registers runsc only as root with /usr/bin/runsc present")
    conf = tmp_path / "docker" / "daemon.json"
    env = {**os.environ, "COBALT_DOCKER_DAEMON_JSON": str(conf), "COBALT_DOCKERD_RELOAD": "0"}
    script = Path(__file__).resolve().parents[2] / "scripts" / "register-runsc.sh"

    def register() -> str:
        done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    conf.parent.mkdir()
    conf.write_text(json.dumps({"log-level": "warn", "runtimes": {"other": {"path": "/bin/other"}}}))
    assert "registered runsc" in register()
    merged = json.loads(conf.read_text())
    assert merged == {
        "log-level": "warn",
        "runtimes": {
            "other": {"path": "/bin/other"},
            "runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]},
        },
    }
    assert register() == "" and json.loads(conf.read_text()) == merged  # idempotent: nothing to do
    conf.write_text("{not json")
    assert register() == "" and conf.read_text() == "{not json"  # left alone, setup goes on
