"""`Sandbox`: the public entry point. Run a program against tests, isolated and fast.

    with Sandbox.from_config(settings.sandbox) as box:
        result = box.run(program, [TestCase(input="1 2\\n", output="3\\n")], "stdio")
        results = box.run_many([Job(program, tests), ...])

`Sandbox` validates and prepares each job and limits how many run at once; a backend
(sandbox/backend.py) runs them: by default `DockerBackend`, a warm pool of containers on
the local engine whose PID 1 is a warm fork server reached over the attach socket (the
`Transport`, sandbox/transport.py; `transport="exec"`: one `docker exec` per job); with
`backend: ray` in the section, `RayBackend` (sandbox/ray_backend.py), one such pool per
node of a Ray cluster. A
failing program never raises; SandboxError is raised only when the sandbox cannot run at
all (no engine, no image). Sandbox faults are reported in `RunResult.sandbox_error` so
callers can drop the sample instead of scoring it.
"""

from __future__ import annotations

import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Mapping, Sequence

import docker

from sandbox.api import Job, Limits, Project, RunResult, TestCase
from sandbox.backend import Backend, DockerBackend
from sandbox.engine import Retry, Runtime
from sandbox.image import image_tag
from sandbox.protocol import prepare
from sandbox.ray_backend import RayBackend
from sandbox.sandbox_settings import SandboxSettings
from sandbox.transport import Transport, make_transport

_OPEN: "weakref.WeakSet[Sandbox]" = weakref.WeakSet()


def open_sandboxes() -> list["Sandbox"]:
    """Sandboxes of this process that are not closed yet."""
    return list(_OPEN)


class Sandbox:
    """Runs untrusted programs against tests, on a backend (a local warm Docker pool by default)."""

    def __init__(
        self,
        image: str | None = None,
        pool_size: int = 4,
        limits: Limits | None = None,
        max_jobs_per_container: int = 200,
        concurrency: int = 4,
        client: docker.DockerClient | None = None,
        transport: str | Transport = "attach",
        backend: Backend | None = None,
        canaries: bool = True,
        outside_checks: bool = True,
        engine_retries: int = 4,
        engine_backoff_s: float = 0.5,
        runtime: "str | Runtime | None" = None,
        runtime_extra_pids: dict[str, int] | None = None,
    ) -> None:
        """transport: "attach" (default) hands each job to the container's PID 1, a warm
        fork server, over the attach socket; "exec" runs one `docker exec` per job; or a
        Transport object. backend: where jobs run (default: a DockerBackend built from the
        other arguments). canaries: hidden tamper canaries in every job (sandbox/canary.py);
        outside_checks: value-shaped function tests judged here (sandbox/checks.py).
        engine_retries / engine_backoff_s: Docker calls that time out under load are retried
        that many times in all, with exponential back-off from that wait. runtime: the OCI
        runtime of the containers (None: the engine's default, runc; "runsc": gVisor); the
        engine must know it (SandboxError in one sentence otherwise); runtime_extra_pids:
        host pids a runtime needs on top of limits.pids (sandbox/engine.py `Runtime`)."""
        self.limits = limits or Limits()
        self.canaries, self.outside_checks = bool(canaries), bool(outside_checks)
        self.concurrency = max(1, int(concurrency))
        self.transport = make_transport(transport)
        self.backend: Backend = backend or DockerBackend(
            image_tag(image),
            self.transport,
            pool_size,
            max_jobs_per_container,
            client,
            client_pool=max(16, 2 * self.concurrency + 4),
            retry=Retry(int(engine_retries), float(engine_backoff_s)),
            runtime=Runtime.of(runtime, runtime_extra_pids),
        )
        self.image = self.backend.image
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._batches = callable(getattr(self.backend, "execute_many", None))  # bounds its own in-flight jobs
        _OPEN.add(self)

    @classmethod
    def from_config(cls, section: "SandboxSettings | Mapping[str, Any] | None" = None, **overrides: Any) -> "Sandbox":
        """Build from the `sandbox:` settings (a SandboxSettings, or a mapping validated into
        one: image, pool_size, limits, ...); keyword overrides win."""

        settings = section if isinstance(section, SandboxSettings) else SandboxSettings.model_validate(section or {})
        kwargs: dict[str, Any] = settings.model_dump(exclude={"limits", "backend", "ray"}) | {
            "limits": replace(settings.limits)
        }
        kwargs.update(overrides)
        if settings.backend == "ray" and "backend" not in overrides:
            kwargs["backend"] = RayBackend(
                image_tag(kwargs["image"]),
                make_transport(kwargs["transport"]).name,
                kwargs["pool_size"],
                kwargs["max_jobs_per_container"],
                engine_retry=(kwargs["engine_retries"], kwargs["engine_backoff_s"]),
                runtime=Runtime.of(kwargs["runtime"], kwargs["runtime_extra_pids"]),
                **settings.ray.model_dump(),
            )
        return cls(**kwargs)

    # ------------------------------------------------- the local Docker backend's particulars
    @property
    def client(self) -> docker.DockerClient:
        return self.backend.client  # type: ignore[attr-defined]

    @property
    def owner(self) -> str:
        return self.backend.owner  # type: ignore[attr-defined]

    @property
    def instance(self) -> str:
        return self.backend.instance  # type: ignore[attr-defined]

    @property
    def orphans_removed(self) -> int:
        return self.backend.orphans_removed  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ running
    def run(
        self,
        program: str | bytes,
        tests: Sequence[TestCase | dict],
        kind: str = "stdio",
        limits: Limits | None = None,
        project: Project | None = None,
    ) -> RunResult:
        """Run `program` against `tests`; never raises for a failing program."""
        job = prepare(program, list(tests), kind, limits or self.limits, project, self.canaries, self.outside_checks)
        if job.result is not None:
            return job.result
        if self._batches:
            return self.backend.execute_many([job])[0]  # type: ignore[attr-defined]
        with self._slots:
            return self.backend.execute(job)

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        """Run jobs concurrently (at most `concurrency` at once, or the backend's own bound
        on jobs in flight when it takes batches); results in job order."""
        if not jobs:
            return []
        if self._batches:
            prepared = [
                prepare(
                    j.program,
                    list(j.tests),
                    j.kind,
                    j.limits or self.limits,
                    j.project,
                    self.canaries,
                    self.outside_checks,
                )
                for j in jobs
            ]
            todo = [p for p in prepared if p.result is None]
            done = iter(self.backend.execute_many(todo) if todo else [])  # type: ignore[attr-defined]
            return [p.result if p.result is not None else next(done) for p in prepared]
        pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(jobs)))
        try:
            futures = [pool.submit(self.run, j.program, j.tests, j.kind, j.limits, j.project) for j in jobs]
            return [f.result() for f in futures]
        except BaseException:  # Ctrl-C: the jobs not started yet are dropped, not run to the end
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=True)

    # ------------------------------------------------------------------ lifecycle
    def warm(self) -> "Sandbox":
        """Start the default pool's containers now rather than on first use."""
        self.backend.warm(self.limits)
        return self

    def close(self) -> None:
        """Remove every container of this sandbox (also done by the engine if we die)."""
        _OPEN.discard(self)
        self.backend.close()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
