"""How a job reaches a warm pool container: the `Transport` seam and its two implementations.

A transport decides what PID 1 of a pool container is and how one job's payload gets to
the harness and its output back. `AttachTransport` (the default): PID 1 is a warm fork
server that reads jobs on the attach socket the pool keeps open - no Docker call per job.
`ExecTransport`: PID 1 only watches stdin; each job is one `docker exec` of the harness
(~75-100 ms of daemon CPU on Docker 20.10). `make_transport` turns the config's
`sandbox.transport` name (or a Transport object) into one. Not here: which container to
use (sandbox/pool.py) or where the pool lives (sandbox/backend.py).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import docker

from sandbox.engine import harness_command
from sandbox.protocol import close_hijacked, exchange


@runtime_checkable
class Transport(Protocol):
    """Carries one job to a warm container's harness and its output back."""

    name: str
    attach_params: dict[str, int]  # how the pool attaches to PID 1's streams

    def init_command(self) -> list[str]:
        """PID 1 of a pool container."""

    def run_job(
        self, client: docker.DockerClient, container_id: str, sock: Any, payload: bytes, timeout_s: float
    ) -> tuple[bytes, bytes, bool]:
        """Run one job in the container whose attach socket is `sock`: (stdout, stderr, finished)."""


class _Named:
    name = ""

    def __str__(self) -> str:
        return self.name


class AttachTransport(_Named):
    """Jobs go to PID 1, a warm fork server, over the attach socket; no Docker call per job."""

    name = "attach"
    attach_params = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}

    def init_command(self) -> list[str]:
        return harness_command("serve")

    def run_job(
        self, client: docker.DockerClient, container_id: str, sock: Any, payload: bytes, timeout_s: float
    ) -> tuple[bytes, bytes, bool]:
        return exchange(sock, payload, timeout_s, half_close=False)


class ExecTransport(_Named):
    """One `docker exec` of the harness per job; PID 1 only waits for its stdin to close."""

    name = "exec"
    attach_params = {"stdin": 1, "stream": 1}

    def init_command(self) -> list[str]:
        return harness_command("watchdog")

    def run_job(
        self, client: docker.DockerClient, container_id: str, sock: Any, payload: bytes, timeout_s: float
    ) -> tuple[bytes, bytes, bool]:
        exec_id = client.api.exec_create(container_id, harness_command("run"), stdin=True, stdout=True, stderr=True)[
            "Id"
        ]
        exec_sock = client.api.exec_start(exec_id, socket=True)
        try:
            return exchange(exec_sock, payload, timeout_s)
        finally:
            close_hijacked(exec_sock)


TRANSPORTS: dict[str, type] = {"attach": AttachTransport, "exec": ExecTransport}


def make_transport(choice: "str | Transport") -> Transport:
    """A Transport from its config name ("attach", "exec") or as given."""
    if isinstance(choice, str):
        if choice not in TRANSPORTS:
            raise ValueError(f"unknown transport {choice!r}: use one of {', '.join(TRANSPORTS)}")
        return TRANSPORTS[choice]()
    if not isinstance(choice, Transport):
        raise ValueError(f"a transport must be one of {', '.join(TRANSPORTS)} or a Transport object")
    return choice
