"""What the TUI needs from the outside world, opened lazily and shared by worker threads:
the model client (which may start the vLLM server, ~60 s), the Docker sandbox and the
trajectory store.

`Services` takes factories, so tests inject a scripted client and the shared sandbox
without touching the real server. It does not run the loop; the controller does.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

from assistant import runtime
from assistant.settings import Settings
from assistant.store.trajectory_db import Store

Progress = Callable[[str], None]
ClientFactory = Callable[[Progress], Any]
SandboxFactory = Callable[[], Any]


@dataclass(frozen=True)
class Openers:
    """What `Services` opens with instead of the configured model, sandbox and store (tests pass
    their fakes here); each one given is the caller's to close."""

    client: ClientFactory | None = None
    sandbox: SandboxFactory | None = None
    store: Store | None = None


class Services:
    """Lazily opened client, sandbox and store; every getter is thread-safe."""

    def __init__(self, settings: Settings, model: str | None = None, openers: Openers = Openers()) -> None:
        self.settings = settings
        self.model_name = model or settings.model.name or "-"
        self._client_factory = openers.client or self._resolve_client
        self._sandbox_factory = openers.sandbox or self._open_sandbox
        self._owns_sandbox = openers.sandbox is None
        self._owns_store = openers.store is None
        self._store = openers.store
        self._client: Any = None
        self._sandbox: Any = None
        self._client_lock = threading.Lock()
        self._sandbox_lock = threading.Lock()
        self.server_state = "not started"

    def _resolve_client(self, progress: Progress) -> Any:
        return runtime.open_client(
            self.settings, self.model_name if self.model_name != "-" else None, progress=progress
        )

    def _open_sandbox(self) -> Any:
        return runtime.open_sandbox(self.settings)

    def client(self, progress: Progress = lambda _: None) -> Any:
        """The model client; the first call may start the server (blocks; call from a worker)."""
        with self._client_lock:
            if self._client is None:
                self.server_state = "starting"
                progress("starting")
                try:
                    self._client = self._client_factory(progress)
                except BaseException:
                    self.server_state = "error"
                    raise
                self.server_state = "ready"
                progress("ready")
            return self._client

    def client_if_ready(self) -> Any:
        """The client when it is already open, else None (never waits for a server)."""
        return self._client

    def sandbox(self) -> Any:
        """The sandbox; raises SandboxError with a fix when Docker or the image is missing."""
        with self._sandbox_lock:
            if self._sandbox is None:
                self._sandbox = self._sandbox_factory()
            return self._sandbox

    def store(self) -> Store:
        if self._store is None:
            self._store = runtime.open_store(self.settings)
        return self._store

    def close(self) -> None:
        """Close what this object opened (injected objects belong to their owner)."""
        if self._sandbox is not None and self._owns_sandbox:
            self._sandbox.close()
        self._sandbox = None
        if self._store is not None and self._owns_store:
            self._store.close()
            self._store = None
