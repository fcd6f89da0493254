"""Fixtures for the sandbox tests. They use the REAL Docker engine and build the sandbox
image if it is missing (fast when it exists). One session-scoped Sandbox keeps the suite
fast (one per transport); when the session ends, no container owned by this process may
be left. COBALT_TEST_RUNTIME=runsc runs the `sandbox` fixture's pool under gVisor (default:
the engine's runc)."""

from __future__ import annotations

import os
import time

import pytest

from sandbox import Limits, Sandbox, SandboxError, build_image
from sandbox.core import open_sandboxes
from sandbox.engine import INSTANCE_LABEL, Runtime, connect, owned_containers
from sandbox.sandbox_settings import SandboxSettings

# Timeout tests use their own 1 s limits; the rest get 5 s of slack for a loaded machine.
# Memory stays far below the 2 GB the tests try.
LIMITS = Limits(timeout_s=5.0, memory_mb=256, pids=64, cpus=1.0, output_bytes=65536, workdir_mb=32)


@pytest.fixture(scope="session")
def docker_client():
    try:
        client = connect()
    except SandboxError as exc:
        pytest.fail(f"the sandbox tests need a Docker engine: {exc}")
    build_image(client, progress=lambda line: print(line, flush=True))
    return client


@pytest.fixture(scope="session", autouse=True)
def no_container_left():
    """Set up before, torn down after every sandbox test: then this process owns no
    container, except those of sandboxes that were already open before (e.g. the root
    conftest's pool, when other test directories ran first)."""
    earlier = {box.instance for box in open_sandboxes()}
    yield
    try:
        client = connect()
    except SandboxError:
        return  # the tests themselves report a missing engine

    def left() -> list[str]:
        return [
            c["Id"][:12] for c in owned_containers(client) if (c.get("Labels") or {}).get(INSTANCE_LABEL) not in earlier
        ]

    deadline = time.monotonic() + 15
    while left() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left(), f"containers left behind by the sandbox tests: {left()}"


@pytest.fixture(scope="session", params=["attach", "exec"])
def sandbox(request, docker_client):
    """Every test that uses it runs on both transports (PID 1 fork server, docker exec)."""
    runtime = Runtime.of(os.environ.get("COBALT_TEST_RUNTIME") or None, SandboxSettings().runtime_extra_pids)
    box = Sandbox(
        pool_size=2, concurrency=2, limits=LIMITS, client=docker_client, transport=request.param, runtime=runtime
    )
    box.warm()
    yield box
    box.close()
    mine = [
        c["Id"][:12]
        for c in owned_containers(docker_client)
        if (c.get("Labels") or {}).get(INSTANCE_LABEL) == box.instance
    ]
    assert not mine, f"Sandbox.close() left containers behind: {mine}"
