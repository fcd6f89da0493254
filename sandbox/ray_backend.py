"""`sandbox.backend: ray`: prepared jobs run on a Ray cluster, one sandbox worker per node.

Each worker is a Ray actor pinned to its node (hard node-affinity scheduling; with
`sandbox.ray.resource` set, only nodes that advertise that custom resource get one) and
owns a `DockerBackend`, a warm container pool on that node's own Docker engine. The
driver submits jobs with back-pressure: at most `in_flight` refs outstanding per worker,
harvested with `ray.wait`, each new job going to the least-loaded live worker. A worker or
node that dies mid-job (the actor or its node is lost) is dropped and the job is resubmitted
to another worker, so it is never scored as a failed program; after `retries` losses the job
gets a `sandbox_error`, which callers drop rather than score. Results keep their meaning.

Ray is optional (`pip install 'cobalt[cluster]'`) and imported only here, when this backend
is built. Not here: job preparation (sandbox/protocol.py) or the container pool itself
(sandbox/backend.py, sandbox/pool.py); starting the cluster is `ray start` on each host.
"""

from __future__ import annotations

import os
import threading
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

from sandbox.api import Limits, RunResult, SandboxError
from sandbox.backend import DockerBackend
from sandbox.engine import Retry
from sandbox.prepared import Prepared
from sandbox.protocol import error_tests
from sandbox.transport import make_transport


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise SandboxError(
            "sandbox.backend is ray but Ray is not installed: run pip install 'cobalt[cluster]'"
        ) from None
    return ray


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Exceptions meaning the worker or its node is gone, not that the program failed."""
    ex = ray.exceptions
    return (ex.RayActorError, ex.WorkerCrashedError, ex.NodeDiedError, ex.ObjectLostError, ex.LocalRayletDiedError)


class SandboxWorker:
    """The actor on one node: a warm Docker pool on that node's engine."""

    def __init__(
        self,
        image: str,
        transport: str,
        pool_size: int,
        max_jobs: int,
        engine_retry: tuple[int, float] = (4, 0.5),
        runtime: Any = None,
    ) -> None:
        import ray

        self.backend = DockerBackend(
            image,
            make_transport(transport),
            pool_size,
            max_jobs,
            client_pool=max(16, 2 * pool_size + 4),
            retry=Retry(*engine_retry),
            runtime=runtime,
        )
        self.node_id = ray.get_runtime_context().get_node_id()

    def identity(self) -> tuple[str, int]:
        """(node id, process id) of this worker."""
        return self.node_id, os.getpid()

    def warm(self, limits: Limits) -> None:
        self.backend.warm(limits)

    def execute(self, job: Prepared) -> tuple[RunResult, str]:
        return self.backend.execute(job), self.node_id

    def close(self) -> None:
        self.backend.close()


@dataclass
class _Worker:
    node_id: str
    handle: Any
    pid: int
    busy: int = 0
    alive: bool = True


class RayBackend:
    """Submits prepared jobs to one `SandboxWorker` per Ray node; same results as DockerBackend."""

    def __init__(
        self,
        image: str,
        transport: Any = "attach",
        pool_size: int = 4,
        max_jobs: int = 200,
        address: str = "auto",
        resource: str = "",
        in_flight: int = 0,
        retries: int = 3,
        namespace: str = "cobalt-sandbox",
        engine_retry: tuple[int, float] = (4, 0.5),
        runtime: Any = None,
    ) -> None:
        self.ray = _ray()
        self.image, self.transport = image, str(transport)
        self.pool_size, self.max_jobs = max(1, int(pool_size)), max(1, int(max_jobs))
        self.resource, self.retries = resource, max(0, int(retries))
        self.engine_retry = (int(engine_retry[0]), float(engine_retry[1]))  # each worker's Docker calls
        self.runtime = runtime  # each worker's OCI runtime (sandbox/engine.py Runtime; its node's engine must know it)
        self.per_worker = int(in_flight) or 2 * self.pool_size
        self.lost = _lost_errors(self.ray)
        self.jobs_by_node: Counter[str] = Counter()
        self.resubmitted = 0
        self._workers: dict[str, _Worker] = {}
        self._cond = threading.Condition()
        self._closed = False
        self._owns_ray = not self.ray.is_initialized()
        if self._owns_ray:
            try:  # "local": a private one-node Ray on this machine, for the lifetime of this backend
                self.ray.init(
                    address=None if address == "local" else (address or "auto"),
                    namespace=namespace,
                    log_to_driver=False,
                )
            except (ConnectionError, RuntimeError) as exc:
                raise SandboxError(
                    f"cannot join the Ray cluster at {address or 'auto'} ({str(exc).splitlines()[0]}): "
                    "run `ray start --head` on one host and `ray start --address HEAD:PORT` on "
                    "the others, or set sandbox.ray.address"
                ) from None
        try:
            self._start_workers()
            if not self._workers:
                hint = f" advertising resource {resource!r}" if resource else ""
                raise SandboxError(
                    f"the Ray cluster has no live node{hint} to host a sandbox worker: "
                    "start one with `ray start --address HEAD:PORT`"
                )
        except BaseException:
            if self._owns_ray:
                self.ray.shutdown()
            raise

    # ------------------------------------------------------------------ workers
    def _nodes(self) -> list[str]:
        return [
            n["NodeID"]
            for n in self.ray.nodes()
            if n.get("Alive") and (not self.resource or n.get("Resources", {}).get(self.resource, 0) > 0)
        ]

    def _start_workers(self) -> None:
        """One worker on each live node that has none; raises if a worker cannot start."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor_cls = self.ray.remote(SandboxWorker)
        started = {}
        for node_id in self._nodes():
            if node_id in self._workers:
                continue
            options: dict[str, Any] = dict(
                num_cpus=0,
                max_restarts=0,
                max_concurrency=self.per_worker + 2,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
            )
            if self.resource:
                options["resources"] = {self.resource: 0.001}
            handle = actor_cls.options(**options).remote(
                self.image, self.transport, self.pool_size, self.max_jobs, self.engine_retry, self.runtime
            )
            started[node_id] = handle
        for node_id, handle in started.items():
            try:
                _node, pid = self.ray.get(handle.identity.remote())
            except self.lost as exc:
                self.ray.kill(handle)
                if node_id in self._nodes():  # alive node, but its worker cannot start: a real error
                    own = _sandbox_error(exc)  # e.g. that node's engine lacks sandbox.runtime: its one sentence
                    if own:
                        raise SandboxError(own) from None
                    raise SandboxError(
                        f"the sandbox worker on Ray node {node_id[:12]} could not start "
                        f"({_reason(exc)}): check Docker and the sandbox image on that host"
                    ) from None
                continue
            self._workers[node_id] = _Worker(node_id, handle, pid)

    def workers(self) -> dict[str, int]:
        """Node id -> process id of each live worker."""
        with self._cond:
            return {w.node_id: w.pid for w in self._workers.values() if w.alive}

    def _acquire(self, block: bool) -> _Worker | None:
        """The least-loaded live worker with room, or None; waits for room when `block`."""
        with self._cond:
            while True:
                if self._closed:
                    raise SandboxError("the sandbox was closed")
                live = [w for w in self._workers.values() if w.alive]
                if not live:
                    self._start_workers()
                    live = [w for w in self._workers.values() if w.alive]
                    if not live:
                        raise SandboxError(
                            "no Ray sandbox worker is alive: every node hosting one died; "
                            "restart them with `ray start --address HEAD:PORT`"
                        )
                free = [w for w in live if w.busy < self.per_worker]
                if free:
                    worker = min(free, key=lambda w: w.busy)
                    worker.busy += 1
                    return worker
                if not block:
                    return None
                self._cond.wait(timeout=1.0)

    def _release(self, worker: _Worker, dead: bool = False) -> None:
        with self._cond:
            worker.busy -= 1
            if dead and worker.alive:
                worker.alive = False
                self._workers.pop(worker.node_id, None)
                try:
                    self.ray.kill(worker.handle)
                except Exception:  # noqa: BLE001 - the actor is gone already
                    pass
            self._cond.notify_all()

    # ------------------------------------------------------------------ running
    def execute(self, job: Prepared) -> RunResult:
        return self.execute_many([job])[0]

    def execute_many(self, jobs: list[Prepared]) -> list[RunResult]:
        """Results in job order; jobs whose worker died are resubmitted elsewhere."""
        results: list[RunResult | None] = [None] * len(jobs)
        pending = deque(range(len(jobs)))
        losses: Counter[int] = Counter()
        refs: dict[Any, tuple[int, _Worker]] = {}
        try:
            self._drive(jobs, results, pending, losses, refs)
        finally:
            for _i, worker in refs.values():  # only left after an error: give their slots back
                self._release(worker)
        return [r for r in results if r is not None]

    def _drive(
        self,
        jobs: list[Prepared],
        results: list[RunResult | None],
        pending: deque[int],
        losses: Counter[int],
        refs: dict[Any, tuple[int, _Worker]],
    ) -> None:
        while pending or refs:
            while pending:
                worker = self._acquire(block=not refs)
                if worker is None:
                    break
                i = pending.popleft()
                refs[worker.handle.execute.remote(jobs[i])] = (i, worker)
            ready, _ = self.ray.wait(list(refs), num_returns=1, timeout=1.0)
            for ref in ready:
                i, worker = refs.pop(ref)
                try:
                    result, node_id = self.ray.get(ref)
                except self.lost as exc:
                    self._release(worker, dead=True)
                    losses[i] += 1
                    if losses[i] > self.retries:
                        results[i] = RunResult(
                            error_tests(jobs[i].tests, jobs[i].kind, "sandbox fault; not the program's"),
                            sandbox_error=f"the Ray sandbox worker was lost {losses[i]} times ({_reason(exc)})",
                        )
                    else:
                        self.resubmitted += 1
                        pending.appendleft(i)
                    continue
                except self.ray.exceptions.RayTaskError as exc:
                    self._release(worker)
                    if isinstance(exc.cause, SandboxError):
                        raise SandboxError(str(exc.cause)) from None
                    raise
                self._release(worker)
                with self._cond:
                    self.jobs_by_node[node_id] += 1
                results[i] = result

    # ------------------------------------------------------------------ lifecycle
    def warm(self, limits: Limits) -> None:
        with self._cond:
            handles = [w.handle for w in self._workers.values() if w.alive]
        try:
            self.ray.get([h.warm.remote(limits) for h in handles])
        except self.lost:
            pass  # a lost worker is found and dropped by the next job

    def close(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._closed = True
            workers = list(self._workers.values())
            self._workers.clear()
            self._cond.notify_all()
        closing = [w.handle.close.remote() for w in workers if w.alive]
        try:
            self.ray.get(closing, timeout=60)
        except Exception:  # noqa: BLE001 - a worker that cannot close is killed below; its containers die with it
            pass
        for worker in workers:
            try:
                self.ray.kill(worker.handle)
            except Exception:  # noqa: BLE001
                pass
        if self._owns_ray:
            self.ray.shutdown()


def _sandbox_error(exc: BaseException) -> str:
    """The message of a SandboxError raised in a worker's creation, from Ray's error text."""
    for line in str(exc).splitlines():
        if "SandboxError: " in line:
            return line.split("SandboxError: ", 1)[1].strip()
    return ""


def _reason(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__)[:160]
