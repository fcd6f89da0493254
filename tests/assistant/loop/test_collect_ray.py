"""`collect` over `sandbox.backend: ray` on a real two-node Ray cluster on this machine (each
node with its own warm Docker pool): sessions run on both nodes, and with one node killed
mid-run every session still ends with the outcome it has without the kill; no job of the
dead node is scored as a program failure or lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.loop.collect import collect
from assistant.problems.resolve import load_problems
from assistant.settings import LoopSettings
from assistant.store.trajectory_db import Store
from sandbox import Sandbox
from tests.assistant.loop.test_collect import OracleClient
from tests.sandbox.ray_cluster import RESOURCE, LocalRayCluster, head_node_id, kill_when_busy, two_nodes

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture
def cluster():
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'cobalt[cluster]'")
    with two_nodes() as nodes:
        yield nodes


def test_collect_on_two_nodes_survives_a_node_killed_mid_run(cobalt_home: Path, cluster: LocalRayCluster) -> None:
    section = {
        "backend": "ray",
        "pool_size": 1,
        "limits": {"timeout_s": 5.0},
        "ray": {"address": cluster.address, "resource": RESOURCE, "in_flight": 2},
    }
    problems = load_problems("humaneval:6")  # the oracle is wrong on the first turn of problems 1, 3, 5
    with Sandbox.from_config(section) as box, Store.open() as store:
        backend = box.backend
        victim_node, victim_pid = next((n, pid) for n, pid in backend.workers().items() if n != head_node_id())
        killed = kill_when_busy(cluster, backend, victim_node, victim_pid)
        report = collect(problems, OracleClient(0.3), box, store, LoopSettings(turns=3), samples=2, concurrency=4)
        assert killed.wait(timeout=120)
        assert victim_node not in backend.workers()
        by_node = dict(backend.jobs_by_node)
        sessions = store.sessions(source="collect", with_turns=True)
    assert len(by_node) == 2 and all(count > 0 for count in by_node.values()), by_node
    assert (report.planned, dict(report.statuses)) == (12, {"passed": 12})
    assert sorted(len(s.turns) for s in sessions) == [1] * 6 + [2] * 6  # no extra turn after a lost job
