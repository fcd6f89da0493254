"""`SandboxSettings`: the typed `sandbox:` section of the configuration, with the defaults of
`configs/default.yaml`. It lives in the sandbox package so that `Sandbox.from_config` can take
it without importing anything of Cobalt's; `assistant.settings` uses it as its sandbox section.

This module only describes and validates settings; `sandbox.core.Sandbox` acts on them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sandbox.api import Limits


class Section(BaseModel):
    """A settings section: unknown keys are refused, a number given for a text is taken as text.
    The base of every section of Cobalt's settings (`assistant.settings`), this package's first."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


class RaySettings(Section):
    """Where `backend: ray` runs jobs: a Ray cluster with one sandbox worker per node."""

    address: str = Field(
        "auto",
        description="The cluster to join (auto: the one `ray start` runs on this host; "
        "local: a private one-node Ray started by this process).",
    )
    resource: str = Field("", description='Only nodes advertising this custom resource host a worker ("": all).')
    in_flight: int = Field(0, ge=0, description="Jobs outstanding per worker (0: 2 x pool_size).")
    retries: int = Field(3, ge=0, description="Resubmissions of a job whose worker or node died.")


class SandboxSettings(Section):
    """How the Docker sandbox runs programs."""

    backend: Literal["docker", "ray"] = Field(
        "docker",
        description="docker: a warm pool on this machine's engine; ray: one such pool per node of a Ray cluster.",
    )
    ray: RaySettings = Field(default_factory=RaySettings, description="The Ray backend's cluster and back-pressure.")

    image: str | None = Field(
        "cobalt-sandbox",
        description="The sandbox image name (tagged with the harness version unless it has a tag of its own).",
    )
    pool_size: int = Field(4, ge=1, description="Warm containers kept in the pool.")
    max_jobs_per_container: int = Field(200, ge=1, description="Jobs one container runs before it is replaced.")
    concurrency: int = Field(4, ge=1, description="Jobs run at once.")
    transport: str = Field(
        "attach",
        description="How a job reaches its container: `attach` (the warm fork "
        "server behind PID 1) or `exec` (one `docker exec` per job).",
    )
    canaries: bool = Field(
        True,
        description="A hidden tamper canary in every job: a test no honest program "
        "can pass; if it passes, the run is `tampered` (pass rate 0).",
    )
    outside_checks: bool = Field(
        True,
        description="Judge `assert CALL == EXPECTED`-shaped function tests "
        "outside the program's process (the expected value never "
        "enters it).",
    )
    runtime: str | None = Field(
        None,
        description="The containers' OCI runtime: null for the engine's default "
        "(runc), runsc for gVisor (a user-space kernel between the "
        "program and the host; registered by scripts/register-runsc.sh).",
    )
    runtime_extra_pids: dict[str, int] = Field(
        default_factory=lambda: {"runsc": 192},
        description="Host pids a runtime needs on top of limits.pids (gVisor's "
        "own threads count in the container's pids cgroup).",
    )
    engine_retries: int = Field(4, ge=1, description="Attempts in all for a Docker call that times out under load.")
    engine_backoff_s: float = Field(0.5, ge=0, description="First wait between those attempts (then doubled).")
    limits: Limits = Field(
        default_factory=Limits,
        description="Per-run resource limits (timeout_s per test, memory_mb, pids, cpus, output_bytes, workdir_mb).",
    )
