"""Where prepared jobs run: the `Backend` seam and the local Docker backend.

`Sandbox` (sandbox/core.py) validates and prepares each job, then hands it to a backend.
`DockerBackend` runs it in a warm pool of hardened containers on this machine's engine,
one pool per container spec, under the OCI runtime given (runc by default; gVisor's runsc
when `sandbox.runtime` says so), with the transport given (sandbox/transport.py). A sandbox
fault in the middle of a job (the container vanished, the harness crashed) is retried
once on a fresh container, then reported in `RunResult.sandbox_error`. Engine calls that
time out under load are retried with back-off (sandbox/engine.py `Retry`); if the engine
still does not answer, SandboxError says so in one sentence, and `close` removes every
container of this instance, even one a timed-out create made anyway. Another backend
(e.g. one that submits prepared jobs to a pool of remote workers, each owning a local
`DockerBackend`) implements the same three methods; callers do not change.
"""

from __future__ import annotations

import threading
import uuid
from functools import partial
from typing import Protocol

import docker
import requests

from sandbox.api import Limits, RunResult, SandboxError
from sandbox.engine import (
    ENGINE_ERRORS,
    Retry,
    Runtime,
    check_runtime,
    connect,
    container_spec,
    owner_id,
    remove_instance,
    remove_orphans,
    short_reason,
)
from sandbox.image import require_image
from sandbox.pool import Pool, run_job, start_warm
from sandbox.prepared import Prepared
from sandbox.protocol import assemble, error_tests
from sandbox.transport import Transport


class Backend(Protocol):
    """Runs prepared jobs; `execute` may be called from several threads at once."""

    image: str

    def execute(self, job: Prepared) -> RunResult:
        """The job's result; raises SandboxError only when nothing can run at all."""

    def warm(self, limits: Limits) -> None:
        """Start what running jobs under `limits` needs now, rather than on first use."""

    def close(self) -> None:
        """Release everything; no container may outlive this."""


class DockerBackend:
    """Warm container pools on the local Docker engine."""

    def __init__(
        self,
        image: str,
        transport: Transport,
        pool_size: int = 4,
        max_jobs: int = 200,
        client: docker.DockerClient | None = None,
        client_pool: int = 16,
        retry: Retry | None = None,
        runtime: Runtime | str | None = None,
    ) -> None:
        """runtime: the OCI runtime of every container (None: the engine's default, runc;
        "runsc": gVisor); SandboxError in one sentence if the engine does not know it."""
        self.image, self.transport, self.retry = image, transport, retry or Retry()
        self.runtime = Runtime.of(runtime)
        self.pool_size, self.max_jobs = max(1, int(pool_size)), max(1, int(max_jobs))
        self.client = client or connect(max_pool_size=client_pool, retry=self.retry)
        try:
            self.retry.call(require_image, self.client, self.image)
            check_runtime(self.client, self.runtime, self.retry)
            self.owner, self.instance = owner_id(), uuid.uuid4().hex[:12]
            self.orphans_removed = remove_orphans(self.client, self.retry)
        except ENGINE_ERRORS as exc:
            raise self._engine_error("cannot prepare the sandbox", exc) from None
        self._pools: dict[tuple, Pool] = {}
        self._lock = threading.Lock()
        self._closed = False

    def execute(self, job: Prepared) -> RunResult:
        pool = self._pool(job.limits)
        fault = "unknown"
        for _attempt in range(2):
            try:
                warm = pool.acquire()
            except ENGINE_ERRORS as exc:
                raise self._engine_error(f"cannot start a sandbox container from {self.image}", exc) from None
            recycle = True  # whatever goes wrong below, the container goes back to the pool
            try:
                out, err, _finished = run_job(self.client, warm, job.payload, job.deadline_s)
                outcome = assemble(job, out, err)
                if outcome.fault is None and not (outcome.complete or outcome.killed) and not self._running(warm.id):
                    outcome.fault = "the sandbox container stopped during the run"
                recycle = outcome.recycle or outcome.fault is not None
            except ENGINE_ERRORS as exc:
                fault = f"{type(exc).__name__}: {short_reason(exc)}"
                continue
            finally:
                pool.release(warm, recycle=recycle)
            if outcome.fault is None:
                return outcome.result
            fault = outcome.fault
        return RunResult(error_tests(job.tests, job.kind, "sandbox fault; not the program's"), sandbox_error=fault)

    def _engine_error(self, what: str, exc: BaseException) -> SandboxError:
        reason = short_reason(exc)
        if reason == "timed out" or isinstance(exc, requests.exceptions.ConnectionError):
            return SandboxError(
                f"{what}: the Docker engine did not answer ({reason}) after {self.retry.attempts} "
                "attempts; it may be starved of CPU, so retry when the machine is less loaded"
            )
        return SandboxError(f"{what} ({reason}): check that dockerd is running and run `cobalt sandbox build`")

    def _running(self, container_id: str) -> bool:
        try:
            return bool(self.client.api.inspect_container(container_id)["State"]["Running"])
        except ENGINE_ERRORS:
            return False

    def _pool(self, limits: Limits) -> Pool:
        key = container_spec(limits)
        with self._lock:
            if self._closed:
                raise SandboxError("the sandbox was closed")
            if key not in self._pools:
                start = partial(
                    start_warm,
                    self.client,
                    self.image,
                    limits,
                    self.owner,
                    self.instance,
                    self.transport,
                    self.retry,
                    self.runtime,
                )
                self._pools[key] = Pool(self.client, start, self.pool_size, self.max_jobs)
            return self._pools[key]

    def warm(self, limits: Limits) -> None:
        try:
            self._pool(limits).warm_up()
        except ENGINE_ERRORS as exc:
            raise self._engine_error(f"cannot start the sandbox containers from {self.image}", exc) from None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pools = list(self._pools.values())
        for pool in pools:
            pool.close()
        remove_instance(self.client, self.instance, self.retry)  # e.g. made by a create that timed out
