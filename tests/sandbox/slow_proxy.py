"""A Unix-socket proxy in front of the real Docker engine that makes chosen calls slow, the
way a CPU-starved dockerd answers: the request goes through (the engine does the work), its
response is held back for `delay_s`. Only this test's client goes through it; the shared
engine is never paused (tests/sandbox/test_starved_engine.py)."""

from __future__ import annotations

import os
import re
import socket
import threading
import time

ENGINE = "/var/run/docker.sock"


class SlowProxy:
    """Holds back the response to the first `stalls` requests matching `pattern` (None: all)."""

    def __init__(self, path: str, pattern: bytes, delay_s: float, stalls: int | None = 1, target: str = ENGINE) -> None:
        self.path, self.pattern, self.target = path, re.compile(pattern), target
        self.delay_s, self.stalls = delay_s, stalls
        self.matched = 0
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(path)
        self._server.listen(64)
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.target)
            state = {"hold_until": 0.0}
            threading.Thread(target=self._pump, args=(client, upstream, state, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, state, False), daemon=True).start()

    def _stall(self, data: bytes) -> bool:
        if not self.pattern.search(data):
            return False
        with self._lock:
            if self.stalls is not None and self.matched >= self.stalls:
                return False
            self.matched += 1
            return True

    def _pump(self, src: socket.socket, dst: socket.socket, state: dict, to_engine: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if to_engine and self._stall(data):
                    state["hold_until"] = time.monotonic() + self.delay_s
                if not to_engine and state["hold_until"] > time.monotonic():
                    time.sleep(state["hold_until"] - time.monotonic())
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (dst, src):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self._closed = True
        self._server.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass
