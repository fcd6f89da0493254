"""`sandbox.backend: ray` on a real two-node Ray cluster on this machine, each node with its
own warm Docker pool: a batch runs on both nodes with today's results, and a node killed
mid-batch costs no result and scores no program as failed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench.sandbox_jobs import make_jobs
from sandbox import Job, Sandbox, SandboxError, TestCase
from tests.sandbox.cases import bench_argv
from tests.sandbox.ray_cluster import RESOURCE, LocalRayCluster, head_node_id, kill_when_busy, two_nodes

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'cobalt[cluster]'")
    with two_nodes() as nodes:
        yield nodes


def _sandbox(cluster: LocalRayCluster, **extra) -> Sandbox:
    section = {
        "backend": "ray",
        "pool_size": 1,
        "limits": {"timeout_s": 5.0},
        "ray": {"address": cluster.address, "resource": RESOURCE, "in_flight": 2},
        **extra,
    }
    return Sandbox.from_config(section)


def _slow_jobs(n: int) -> list[Job]:
    """Correct programs that take ~0.3 s each, so a batch is still running when a node dies."""
    jobs = []
    for k in range(n):
        program = f"import time\ntime.sleep(0.3)\nprint(int(input()) + {k})\n"
        jobs.append(Job(program, [TestCase(input=f"{k}\n", output=f"{2 * k}\n")]))
    return jobs


def test_batch_runs_on_both_nodes_with_todays_results(cluster):
    jobs = make_jobs(8, 2)
    wrong = Job("print('nope')\n", [TestCase(input="1\n", output="2\n")])
    with _sandbox(cluster) as box:
        assert len(box.backend.workers()) == 2
        results = box.run_many(jobs + [wrong])
        single = box.run("print(input()[::-1])\n", [TestCase(input="abc\n", output="cba\n")])
        by_node = dict(box.backend.jobs_by_node)
    assert len(results) == 9
    assert all(r.all_passed for r in results[:8]), [r.to_dict() for r in results if not r.all_passed]
    assert results[8].tests[0].status == "failed" and results[8].sandbox_error is None  # a program failure stays one
    assert single.all_passed
    assert len(by_node) == 2 and all(count > 0 for count in by_node.values()), by_node


def test_bench_ray_beside_local_pool(cluster, capsys):
    from assistant.cli import main

    options = f"--backend ray --ray-address {cluster.address} --programs 4 --tests 2 --concurrency 1"
    assert main(bench_argv(options)) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["all_correct"] is True and report["nodes"] == 2
    assert [w["way"] for w in report["ways"]] == ["local warm pool", "ray backend, 2 node(s)"]
    assert [w["tests"] for w in report["ways"]] == [8, 8]
    assert report["ratios"]["ray_vs_local_pool"] > 0 and sum(report["jobs_by_node"].values()) == 4


def test_node_killed_mid_batch_loses_no_result(cluster):
    jobs = _slow_jobs(14)
    with _sandbox(cluster) as box:
        backend = box.backend
        victim_node, victim_pid = next((n, pid) for n, pid in backend.workers().items() if n != head_node_id())
        killed = kill_when_busy(cluster, backend, victim_node, victim_pid)
        results = box.run_many(jobs)
        assert killed.wait(timeout=60)
        assert backend.resubmitted >= 1  # jobs were in flight on the killed node and ran elsewhere
        assert victim_node not in backend.workers()
        assert backend.jobs_by_node[victim_node] >= 1
    assert len(results) == len(jobs)
    assert [r.sandbox_error for r in results] == [None] * len(jobs)
    assert all(r.all_passed for r in results), [r.to_dict() for r in results if not r.all_passed]


def test_the_runtime_reaches_every_nodes_worker(cluster, docker_client):
    from sandbox.engine import LABEL, engine_runtimes

    with pytest.raises(SandboxError) as err:
        _sandbox(cluster, runtime="no-such-runtime")
    assert str(err.value).startswith("the Docker engine has no runtime 'no-such-runtime'")
    if "runsc" not in engine_runtimes(docker_client):
        pytest.skip("runsc (gVisor) is not registered with the Docker engine; run scripts/register-runsc.sh")
    with _sandbox(cluster, runtime="runsc") as box:
        results = box.run_many(make_jobs(12, 2))
        owners = {
            c["Labels"]["cobalt.sandbox.owner"]: docker_client.api.inspect_container(c["Id"])["HostConfig"]
            for c in docker_client.api.containers(filters={"label": LABEL})
        }
        workers = set(box.backend.workers().values())
    assert all(r.all_passed for r in results)
    # Which nodes ran the jobs is Ray's choice (a worker still starting gets none): every
    # container of this sandbox's workers runs under runsc, one pool per node that ran jobs.
    mine = {owner: host["Runtime"] for owner, host in owners.items() if int(owner.split(":")[1]) in workers}
    assert mine and set(mine.values()) == {"runsc"} and len(mine) >= len(box.backend.jobs_by_node), mine


def test_sandbox_package_does_not_import_ray():
    code = "import sys, sandbox, sandbox.core, bench.sandbox_pool; assert 'ray' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_ray_is_one_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(SandboxError, match=r"Ray is not installed: run pip install 'cobalt\[cluster\]'"):
        Sandbox.from_config({"backend": "ray"})


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        Sandbox.from_config({"backend": "kubernetes"})
