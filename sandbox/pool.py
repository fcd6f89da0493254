"""Warm containers and the `docker run` equivalent.

A warm container's PID 1 holds stdin from an attach socket this process keeps open
(stdin_once + auto-remove): if this process dies, even by SIGKILL, the engine closes that
stdin, PID 1 exits and the container removes itself. How a job reaches a warm container
is its `Transport` (sandbox/transport.py: the attach socket to a fork-server PID 1, or one
`docker exec` per job). `Pool` keeps up to `size` containers for one container spec,
hands each to one job at a time, and recycles one after a kill/timeout or `max_jobs` jobs
(removal happens in the background). `run_once` is the `docker run` equivalent (create,
attach, start, wait for removal) that the benchmark compares against.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Callable

import docker

from sandbox.api import Limits, SandboxError
from sandbox.engine import (
    DEFAULT_RUNTIME,
    ENGINE_ERRORS,
    NO_RETRY,
    Retry,
    Runtime,
    create_kwargs,
    harness_command,
    remove,
)
from sandbox.protocol import close_hijacked, exchange
from sandbox.transport import Transport

_LIVE: "weakref.WeakSet[Warm]" = weakref.WeakSet()


class Warm:
    """One running pool container and the attach socket that keeps it alive (and, for the
    attach transport, carries its jobs)."""

    def __init__(self, container_id: str, sock, transport: Transport) -> None:
        self.id, self.sock, self.transport, self.jobs = container_id, sock, transport, 0
        _LIVE.add(self)

    def close_socket(self) -> None:
        close_hijacked(self.sock)


def _forget_in_child() -> None:
    """A forked child must not keep our containers alive after we die. Only the fd is
    closed (detach + close): no locks, which another thread may have held at fork time."""
    for warm in list(_LIVE):
        raw = getattr(warm.sock, "_sock", None)
        try:
            if raw is not None and raw.fileno() >= 0:
                os.close(raw.detach())
        except OSError:
            pass


os.register_at_fork(after_in_child=_forget_in_child)


def start_warm(
    client: docker.DockerClient,
    image: str,
    limits: Limits,
    owner: str,
    instance: str,
    transport: Transport,
    retry: Retry = NO_RETRY,
    runtime: Runtime = DEFAULT_RUNTIME,
) -> Warm:
    kwargs = create_kwargs(client, image, limits, transport.init_command(), owner, instance, runtime)
    cid = retry.call(client.api.create_container, **kwargs)["Id"]
    try:
        sock = retry.call(client.api.attach_socket, cid, params=dict(transport.attach_params))
        retry.call(client.api.start, cid)
    except BaseException:
        remove(client, cid)
        raise
    return Warm(cid, sock, transport)


def run_job(client: docker.DockerClient, warm: Warm, payload: bytes, timeout_s: float) -> tuple[bytes, bytes, bool]:
    """Run one program's job in a warm container, by its transport; (stdout, stderr, finished)."""
    return warm.transport.run_job(client, warm.id, warm.sock, payload, timeout_s)


def run_once(
    client: docker.DockerClient,
    image: str,
    limits: Limits,
    owner: str,
    payload: bytes,
    timeout_s: float,
    instance: str = "",
    retry: Retry = NO_RETRY,
    runtime: Runtime = DEFAULT_RUNTIME,
) -> tuple[bytes, bytes, bool]:
    """`docker run --rm -i` of the harness for one job, through the API (no CLI start-up)."""
    kwargs = create_kwargs(client, image, limits, harness_command("run"), owner, instance, runtime)
    cid = retry.call(client.api.create_container, **kwargs)["Id"]
    result: tuple[bytes, bytes, bool] = (b"", b"", False)
    try:
        sock = retry.call(client.api.attach_socket, cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        retry.call(client.api.start, cid)
        try:
            result = exchange(sock, payload, timeout_s)
        finally:
            close_hijacked(sock)
        try:
            client.api.wait(cid, timeout=timeout_s, condition="removed")
        except ENGINE_ERRORS:
            pass  # removal is slow on a starved engine (a read timeout): `remove` below sees it through
    except docker.errors.NotFound:
        pass  # auto-remove finished first
    finally:
        remove(client, cid)
    return result


class Pool:
    """Up to `size` warm containers of one spec, each started by `start` (e.g. `start_warm` with
    the spec's arguments bound); one job per container at a time."""

    def __init__(self, client: docker.DockerClient, start: Callable[[], Warm], size: int, max_jobs: int) -> None:
        self.client, self.start = client, start
        self.size, self.max_jobs = max(1, size), max(1, max_jobs)
        self._idle: list[Warm] = []
        self._all: dict[str, Warm] = {}
        self._starting = 0
        self._cond = threading.Condition()
        self._closed = False
        self._removers: list[threading.Thread] = []

    def acquire(self) -> Warm:
        with self._cond:
            while True:
                if self._closed:
                    raise SandboxError("the sandbox was closed")
                if self._idle:
                    return self._idle.pop()
                if len(self._all) + self._starting < self.size:
                    self._starting += 1
                    break
                self._cond.wait()
        warm = None
        try:
            warm = self.start()
        finally:
            with self._cond:  # counted as started and as one of all in one step: a waiter woken
                self._starting -= 1  # in between would see room for one more container
                if warm is not None:
                    self._all[warm.id] = warm
                self._cond.notify()
        return warm

    def release(self, warm: Warm, recycle: bool = False) -> None:
        warm.jobs += 1
        with self._cond:
            if not (recycle or warm.jobs >= self.max_jobs or self._closed):
                self._idle.append(warm)
                self._cond.notify()
                return
            self._all.pop(warm.id, None)
            self._cond.notify()
            thread = threading.Thread(target=self._remove, args=(warm,), daemon=True)
            self._removers = [t for t in self._removers if t.is_alive()] + [thread]
        thread.start()

    def warm_up(self) -> None:
        """Start every container now (in parallel) instead of on first use."""
        held: list[Warm] = []
        errors: list[BaseException] = []

        def one() -> None:
            try:
                warm = self.acquire()
                with self._cond:
                    held.append(warm)
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                errors.append(exc)

        threads = [threading.Thread(target=one) for _ in range(self.size)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for warm in held:
            warm.jobs -= 1  # not a job
            self.release(warm)
        if errors:
            raise errors[0]

    def _remove(self, warm: Warm) -> None:
        remove(self.client, warm.id)  # before closing the socket: no race with auto-remove
        warm.close_socket()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            doomed = list(self._all.values())
            self._all.clear()
            self._idle.clear()
            removers = list(self._removers)
            self._cond.notify_all()
        for warm in doomed:
            self._remove(warm)
        for thread in removers:
            thread.join(timeout=30)
