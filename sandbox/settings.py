"""`SandboxSettings`: the typed `sandbox:` section of the configuration, with the defaults of
`configs/default.yaml`. It lives in the sandbox package so that `Sandbox.from_config` can take
it without importing anything of Cobalt's; `assistant.settings` uses it as its sandbox section.

This module only describes and validates settings; `sandbox.core.Sandbox` acts on them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from sandbox.api import Limits


class SandboxSettings(BaseModel):
    """How the Docker sandbox runs programs."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    image: str | None = Field("cobalt-sandbox", description="The sandbox image name (tagged with the harness "
                                                            "version unless it has a tag of its own).")
    pool_size: int = Field(4, ge=1, description="Warm containers kept in the pool.")
    max_jobs_per_container: int = Field(200, ge=1, description="Jobs one container runs before it is replaced.")
    concurrency: int = Field(4, ge=1, description="Jobs run at once.")
    transport: str = Field("attach", description="How a job reaches its container: `attach` (the warm fork "
                                                 "server behind PID 1) or `exec` (one `docker exec` per job).")
    limits: Limits = Field(default_factory=Limits, description="Per-run resource limits (timeout_s per test, "
                                                               "memory_mb, pids, cpus, output_bytes, workdir_mb).")
