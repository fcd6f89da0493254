"""The Docker engine side: connecting (with a how-to-fix error), the hardened settings every
sandbox container gets, owner labels, and removal of orphans left by dead processes.

Every container: no network, read-only root, size-capped tmpfs /work and /tmp (nosuid,
nodev, noexec), non-root user, all capabilities dropped, no-new-privileges, no IPC
namespace sharing, pids limit, memory limit with swap equal to it, CPU quota, nofile and
core ulimits, no logging, auto-remove; under the OCI runtime chosen in `sandbox.runtime`
(the engine's default, runc, or gVisor's runsc; `check_runtime` asks the engine once whether
it knows it). Containers carry the owner's host:pid:start-time, so
a process removes only orphans whose owner is dead, never a live neighbour's containers.
A starved engine is not a crash: calls that time out or lose their connection are retried
with exponential back-off (`Retry`); a container a timed-out create made anyway carries
this process' labels and is swept when its sandbox closes (`remove_instance`).
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import docker
import requests
from docker.types import LogConfig, Ulimit

from sandbox.api import Limits, SandboxError
from sandbox.image import HARNESS_CMD, SANDBOX_USER

LABEL, OWNER_LABEL, INSTANCE_LABEL = "cobalt.sandbox", "cobalt.sandbox.owner", "cobalt.sandbox.instance"
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)
TRANSIENT = (requests.exceptions.Timeout, requests.exceptions.ConnectionError)  # ReadTimeout, "Read timed out"
HARNESS_OVERHEAD_MB = 64
T = TypeVar("T")


@dataclass(frozen=True)
class Retry:
    """How engine calls that time out under load are retried: `attempts` in all, waiting
    backoff_s, 2 x backoff_s, ... between them (config: sandbox.engine_retries/engine_backoff_s)."""

    attempts: int = 4
    backoff_s: float = 0.5

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        for attempt in range(max(1, self.attempts)):
            try:
                return fn(*args, **kwargs)
            except TRANSIENT:
                if attempt + 1 >= max(1, self.attempts):
                    raise
                time.sleep(self.backoff_s * (2**attempt))
        raise AssertionError("unreachable")


NO_RETRY = Retry(attempts=1)


@dataclass(frozen=True)
class Runtime:
    """The OCI runtime of the containers (config: sandbox.runtime, sandbox.runtime_extra_pids):
    `name` None is the engine's default (runc); under "runsc" (gVisor) the container's host pids
    cgroup also counts gVisor's own threads and ptrace stubs (about 30 idle, more per program
    thread), so `extra_pids` are added to limits.pids there."""

    name: str | None = None
    extra_pids: int = 0

    @classmethod
    def of(cls, name: "str | Runtime | None", extra_pids: dict[str, int] | None = None) -> "Runtime":
        if isinstance(name, Runtime):
            return name
        return cls(name or None, int((extra_pids or {}).get(name or "", 0)))


DEFAULT_RUNTIME = Runtime()


def connect(timeout: int = 120, max_pool_size: int = 16, retry: Retry = NO_RETRY) -> docker.DockerClient:
    """A client for the engine at DOCKER_HOST (or the default socket), or SandboxError."""
    host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        client = docker.from_env(timeout=timeout, max_pool_size=max_pool_size)
        retry.call(client.ping)
        return client
    except ENGINE_ERRORS as exc:
        raise SandboxError(
            f"cannot reach the Docker engine at {host} ({short_reason(exc)}): start dockerd, "
            "or run `make test`, which starts it, and check DOCKER_HOST"
        ) from None


def short_reason(exc: BaseException) -> str:
    """A few words on why an engine call failed."""
    text = str(exc)
    for known in (
        "Connection refused",
        "No such file or directory",
        "Permission denied",
        "timed out",
        "Name or service not known",
        "Connection reset",
    ):
        if known.lower() in text.lower():
            return known.lower()
    return (text.strip().splitlines() or [type(exc).__name__])[0][:100]


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "0"


def owner_id(pid: int | None = None) -> str:
    """host:pid:start-time of a process (start time guards against pid reuse)."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_start_time(pid)}"


def owner_alive(owner: str) -> bool:
    """False only when the owner is surely dead: same host, and its pid is gone or reused."""
    try:
        host, pid, start = owner.rsplit(":", 2)
        pid_n = int(pid)
    except ValueError:
        return False
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid_n, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return start == "0" or _start_time(pid_n) in (start, "0")


def remove_orphans(client: docker.DockerClient, retry: Retry = NO_RETRY) -> int:
    """Remove sandbox containers whose owning process is dead; returns how many."""
    removed = 0
    for info in retry.call(client.api.containers, all=True, filters={"label": LABEL}):
        if owner_alive(info.get("Labels", {}).get(OWNER_LABEL, "")):
            continue
        remove(client, info["Id"])
        removed += 1
    return removed


def remove(client: docker.DockerClient, container_id: str, wait_s: float = 15.0) -> None:
    """Kill and remove a container; returns once it is gone (or the engine is)."""
    try:
        client.api.remove_container(container_id, force=True)
        return
    except docker.errors.NotFound:
        return
    except ENGINE_ERRORS:
        pass  # most likely auto-remove is already in progress: wait for it
    try:
        client.api.wait(container_id, timeout=wait_s, condition="removed")
    except ENGINE_ERRORS:
        pass


def remove_instance(client: docker.DockerClient, instance: str, retry: Retry = NO_RETRY) -> int:
    """Remove every container labelled with this sandbox instance (e.g. one a create that
    timed out made anyway); returns how many there were."""
    try:
        found = retry.call(client.api.containers, all=True, filters={"label": f"{INSTANCE_LABEL}={instance}"})
    except ENGINE_ERRORS:
        return 0
    for info in found:
        remove(client, info["Id"])
    return len(found)


def owned_containers(client: docker.DockerClient, owner: str | None = None) -> list[dict]:
    """Sandbox containers of `owner` (this process by default), running or not."""
    flt = {"label": [LABEL, f"{OWNER_LABEL}={owner or owner_id()}"]}
    return client.api.containers(all=True, filters=flt)


def container_spec(limits: Limits) -> tuple:
    """The limits fixed when a container is created (the rest travel with each job)."""
    return (limits.memory_mb, limits.pids, limits.cpus, limits.workdir_mb)


def engine_runtimes(client: docker.DockerClient, retry: Retry = NO_RETRY) -> list[str]:
    """The OCI runtimes the engine knows (`docker info`'s Runtimes)."""
    return sorted((retry.call(client.info) or {}).get("Runtimes") or {})


def check_runtime(client: docker.DockerClient, runtime: Runtime, retry: Retry = NO_RETRY) -> None:
    """SandboxError unless the engine knows the OCI runtime (None: the engine's default, runc);
    asked once when a sandbox opens, not per container."""
    if not runtime.name:
        return
    known = engine_runtimes(client, retry)
    if runtime.name not in known:
        raise SandboxError(
            f"the Docker engine has no runtime {runtime.name!r} (it has: {', '.join(known) or 'none'}); "
            "register it in /etc/docker/daemon.json and reload dockerd, as "
            "scripts/register-runsc.sh does for runsc (see README, sandbox.runtime)"
        )


def create_kwargs(
    client: docker.DockerClient,
    image: str,
    limits: Limits,
    command: list[str],
    owner: str,
    instance: str = "",
    runtime: Runtime = DEFAULT_RUNTIME,
) -> dict[str, Any]:
    """Arguments for `client.api.create_container`: the hardening of docs/architecture.md, under the
    OCI runtime `runtime` (the engine's default, runc; or e.g. gVisor's runsc)."""
    memory = limits.memory_mb + 2 * limits.workdir_mb + HARNESS_OVERHEAD_MB
    tmpfs_opts = f"rw,nosuid,nodev,noexec,size={limits.workdir_mb}m,uid=10001,gid=10001"
    host_config = client.api.create_host_config(
        auto_remove=True,
        read_only=True,
        network_mode="none",
        ipc_mode="none",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        privileged=False,
        pids_limit=limits.pids + runtime.extra_pids,
        mem_limit=f"{memory}m",
        memswap_limit=f"{memory}m",
        nano_cpus=int(limits.cpus * 1e9),
        tmpfs={"/work": tmpfs_opts, "/tmp": tmpfs_opts},
        ulimits=[Ulimit(name="nofile", soft=1024, hard=1024), Ulimit(name="core", soft=0, hard=0)],
        log_config=LogConfig(type="none"),
        runtime=runtime.name,
    )
    return dict(
        image=image,
        command=command,
        user=SANDBOX_USER,
        working_dir="/work",
        stdin_open=True,
        tty=False,
        network_disabled=True,  # detach=False -> StdinOnce
        labels={LABEL: "1", OWNER_LABEL: owner, INSTANCE_LABEL: instance},
        host_config=host_config,
    )


def harness_command(mode: str) -> list[str]:
    """The harness in a container: `run` one job, or PID 1 as `serve` / `watchdog`."""
    return HARNESS_CMD + [mode]
