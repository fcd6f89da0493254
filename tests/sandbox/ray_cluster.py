"""A real local Ray cluster for tests: `ray start --head` plus joined nodes on this machine.

Each node is its own `ray start --block` process group (setsid) with its own temp dir and
unique ports, so a test can kill one node (its raylet, workers and all) with `kill()` and
tear everything down with `stop()` without touching Ray processes that are not ours (no
machine-wide `ray stop`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Collection, Iterator

RAY = str(Path(sys.executable).with_name("ray"))
RESOURCE = "cobalt_sandbox_test"
# Notice a dead node in ~5 s rather than Ray's default ~30 s (not faster: a starved raylet must not look dead).
FAST_DEATH = {"health_check_period_ms": 1000, "health_check_failure_threshold": 5, "health_check_timeout_ms": 1000}


def _free_ports(n: int, taken: Collection[int] = ()) -> list[int]:
    """`n` distinct ports free now and not `taken` (each held bound until all are drawn)."""
    socks, ports = [], []
    try:
        while len(ports) < n:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            port = s.getsockname()[1]
            if port not in taken:
                ports.append(port)
    finally:
        for s in socks:
            s.close()
    return ports


def _port_range(taken: Collection[int], width: int = 24) -> tuple[int, int]:
    """A run of `width` free ports for Ray workers, none of them `taken` (ports already given to
    this or another node; closed again by `_free_ports`, they bind here, and Ray refuses a node
    whose worker range holds one of its own ports: "used by other components")."""
    for _ in range(50):
        start = _free_ports(1)[0]
        if start + width >= 65535 or any(start <= port < start + width for port in taken):
            continue
        socks = []
        try:
            for port in range(start, start + width):
                s = socket.socket()
                s.bind(("127.0.0.1", port))
                socks.append(s)
            return start, start + width - 1
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no run of free ports for Ray workers")


class LocalRayCluster:
    """Nodes started with `ray start`; `address` is the head's GCS address."""

    def __init__(self) -> None:
        self.root = tempfile.mkdtemp(prefix="cbray", dir="/tmp")  # short: Ray's socket paths must fit
        self.procs: list[subprocess.Popen] = []
        self.address = ""
        self._taken: list[int] = []  # every port given to a node so far (its own and its workers')
        # Nodes, `ray status` and this process (the driver) all without token auth, whatever
        # ~/.ray/auth_token an earlier `ray.init()` on this machine left behind.
        self._auth_mode = os.environ.get("RAY_AUTH_MODE")
        os.environ["RAY_AUTH_MODE"] = "disabled"

    def add_node(self, head: bool = False, num_cpus: int = 1) -> subprocess.Popen:
        index = len(self.procs)
        temp_dir = os.path.join(self.root, f"n{index}")
        os.makedirs(temp_dir)
        ports = _free_ports(9, self._taken)
        gcs, manager, objects, grpc, listen, metrics, env_agent, client, dashboard = ports
        self._taken += ports
        low, high = _port_range(self._taken)
        self._taken += range(low, high + 1)
        cmd = [
            RAY,
            "start",
            "--block",
            "--disable-usage-stats",
            "--num-cpus",
            str(num_cpus),
            "--resources",
            json.dumps({RESOURCE: 1}),
            "--node-ip-address",
            "127.0.0.1",
            "--temp-dir",
            temp_dir,
            "--object-store-memory",
            str(80 * 1024 * 1024),
            "--node-manager-port",
            str(manager),
            "--object-manager-port",
            str(objects),
            "--dashboard-agent-grpc-port",
            str(grpc),
            "--dashboard-agent-listen-port",
            str(listen),
            "--metrics-export-port",
            str(metrics),
            "--runtime-env-agent-port",
            str(env_agent),
            "--min-worker-port",
            str(low),
            "--max-worker-port",
            str(high),
        ]
        if head:
            self.address = f"127.0.0.1:{gcs}"
            cmd += [
                "--head",
                "--port",
                str(gcs),
                "--include-dashboard",
                "false",
                "--dashboard-port",
                str(dashboard),
                "--ray-client-server-port",
                str(client),
                "--system-config",
                json.dumps(FAST_DEATH),
            ]
        else:
            cmd += ["--address", self.address]
        log = open(os.path.join(self.root, f"n{index}.log"), "w")
        proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
        )
        self.procs.append(proc)
        return proc

    def wait_nodes(self, n: int, timeout_s: float = 120.0) -> None:
        """Until `n` nodes are alive (asked with `ray status`, so this process is not a driver yet)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"a Ray node exited: {self.log()}")
            out = subprocess.run([RAY, "status", "--address", self.address], capture_output=True, text=True)
            active = out.stdout.split("Pending:")[0]
            if active.count(" node_") >= n:
                return
            time.sleep(1.0)
        raise RuntimeError(f"{n} Ray nodes did not come up in {timeout_s:.0f} s: {self.log()}")

    def kill(self, index: int) -> None:
        """SIGKILL node `index`'s whole process group (raylet, its workers, ...)."""
        try:
            os.killpg(self.procs[index].pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.procs[index].wait(timeout=30)

    def log(self) -> str:
        texts = []
        for path in sorted(Path(self.root).glob("n*.log")):
            texts.append(f"{path.name}: {path.read_text()[-1500:]}")
        return "\n".join(texts)

    def stop(self) -> None:
        for index in reversed(range(len(self.procs))):  # joined nodes first, the head last
            proc = self.procs[index]
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.kill(index)
                except ProcessLookupError:
                    pass
        shutil.rmtree(self.root, ignore_errors=True)
        if self._auth_mode is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = self._auth_mode


@contextlib.contextmanager
def two_nodes() -> Iterator[LocalRayCluster]:
    """A head and one joined node, torn down (and the driver disconnected) on exit."""
    import ray

    nodes = LocalRayCluster()
    try:
        nodes.add_node(head=True)
        nodes.wait_nodes(1)
        nodes.add_node()
        nodes.wait_nodes(2)
        yield nodes
    finally:
        if ray.is_initialized():
            ray.shutdown()
        nodes.stop()


def head_node_id() -> str:
    """The Ray node id of the live head node (the driver must be connected)."""
    import ray

    return next(
        n["NodeID"] for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("node:__internal_head__")
    )


def kill_when_busy(cluster: LocalRayCluster, backend: Any, node: str, pid: int) -> threading.Event:
    """Once `node` has taken a job, kill the joined node (its `ray start` process group) and
    its sandbox worker `pid`, wherever Ray put that process; the event is set when done."""
    killed = threading.Event()

    def run() -> None:
        deadline = time.monotonic() + 120
        while backend.jobs_by_node[node] < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        cluster.kill(1)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        killed.set()

    threading.Thread(target=run, daemon=True).start()
    return killed
