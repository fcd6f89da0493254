"""A starved engine is not a crash (issue 14): Docker calls that time out are retried with
back-off, a container that a timed-out create made anyway is removed, and an engine that
never answers in time gives one sentence, not a traceback. The client reaches the real
engine through a proxy that holds back chosen responses (tests/sandbox/slow_proxy.py), so
the shared engine itself is never paused."""

from __future__ import annotations

import docker
import pytest

from sandbox import Sandbox, SandboxError, TestCase
from sandbox.engine import INSTANCE_LABEL
from tests.sandbox.conftest import LIMITS
from tests.sandbox.slow_proxy import SlowProxy

pytestmark = pytest.mark.docker

CREATE = rb"POST /v[\d.]+/containers/create"
TESTS = [TestCase(input="1 2\n", output="3\n")]


@pytest.fixture
def proxied(tmp_path, docker_client):
    """make(stalls) -> (a client with a 6 s timeout that goes through a new proxy, the proxy). 6 s, not
    less: a create the proxy does not stall must not time out on a loaded machine."""
    made: list[SlowProxy] = []

    def make(stalls: int | None) -> docker.DockerClient:
        proxy = SlowProxy(str(tmp_path / "engine.sock"), CREATE, delay_s=10.0, stalls=stalls)
        made.append(proxy)
        return docker.DockerClient(base_url=f"unix://{proxy.path}", timeout=6), proxy

    yield make
    for proxy in made:
        proxy.close()


def _instance_containers(client, box: Sandbox) -> list[str]:
    return [c["Id"] for c in client.api.containers(all=True, filters={"label": f"{INSTANCE_LABEL}={box.instance}"})]


def test_a_create_that_times_out_is_retried_and_its_container_removed(proxied, docker_client) -> None:
    client, proxy = proxied(stalls=1)
    box = Sandbox(pool_size=1, concurrency=1, limits=LIMITS, client=client, engine_backoff_s=0.1)
    try:
        result = box.run("print(sum(map(int, input().split())))", TESTS, "stdio")
        assert result.sandbox_error is None and result.pass_rate == 1.0
        assert proxy.matched == 1  # the first create timed out ...
        assert len(_instance_containers(docker_client, box)) == 2  # ... though the engine made its container
    finally:
        box.close()
    assert _instance_containers(docker_client, box) == []


def test_an_engine_that_never_answers_in_time_is_one_sentence(proxied, docker_client) -> None:
    client, proxy = proxied(stalls=None)
    box = Sandbox(pool_size=1, concurrency=1, limits=LIMITS, client=client, engine_retries=3, engine_backoff_s=0.1)
    try:
        with pytest.raises(SandboxError) as caught:
            box.run("print(1)", TESTS, "stdio")
        message = str(caught.value)
        assert "did not answer (timed out) after 3 attempts" in message and "\n" not in message
        assert proxy.matched == 3
    finally:
        box.close()
    assert _instance_containers(docker_client, box) == []  # the 3 made by the timed-out creates too
