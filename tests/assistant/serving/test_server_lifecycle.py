"""A server's process and its record stay in step: Ctrl-C while it starts leaves nothing running,
and `cobalt serve --stop` stops a recorded server that no longer answers, never a process that
only reuses its pid."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assistant.serving import server
from tests.conftest import free_port

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)", "--port"]


def _gone(proc: subprocess.Popen, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return True
        time.sleep(0.1)
    return False


def _ctrl_c_at_health_check(module: Any, monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen]:
    """Ctrl-C as `module` first asks the new server for its health; the processes it starts are noted."""
    started: list[subprocess.Popen] = []

    class Recorded(subprocess.Popen):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            started.append(self)

    def interrupted(url: str, timeout: float = 2.0) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(module.subprocess, "Popen", Recorded)
    monkeypatch.setattr(module, "healthy", interrupted)
    return started


def test_ctrl_c_while_the_server_starts_stops_it(
    home_config: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _ctrl_c_at_health_check(server, monkeypatch)
    argv = [*SLEEPER, str(free_port())]
    log = tmp_path / "s.log"
    with pytest.raises(KeyboardInterrupt):
        server.start_once(home_config.server, home_config.paths, (argv, {}), "tiny", tmp_path, log, print, None)
    (proc,) = started
    assert _gone(proc) and not (home_config.paths.data_dir / "server.json").exists()


def test_ctrl_c_while_llama_cpp_restarts_with_an_adapter_stops_the_new_process(
    home_config: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An adapter load restarts llama-server under a new pid; interrupted before it answers, that
    process must not outlive the command (no record names it, so nothing could stop it)."""
    from assistant.serving import hot_load

    old = subprocess.Popen([*SLEEPER, "1"])  # the server before the restart
    started = _ctrl_c_at_health_check(hot_load, monkeypatch)
    state = home_config.paths.data_dir / "server.json"
    info = server.ServerInfo(old.pid, "127.0.0.1", free_port(), "tiny", "/m", str(tmp_path / "s.log"), argv=SLEEPER)
    try:
        with pytest.raises(KeyboardInterrupt):
            hot_load.restart_with_loras(server.ServerInfo(**{**info.__dict__, "state": str(state)}), {"a": "/a.gguf"})
    finally:
        old.kill()
    (proc,) = started
    assert _gone(proc)


def _record(home_config: Any, proc: subprocess.Popen, argv: list[str]) -> None:
    info = server.ServerInfo(proc.pid, "127.0.0.1", free_port(), "tiny", "/m", "/l", argv=argv)
    server.record(info, home_config.paths.data_dir / "server.json")


def test_stop_stops_a_recorded_server_that_does_not_answer(home_config: Any) -> None:
    argv = [*SLEEPER, "1"]
    proc = subprocess.Popen(argv, start_new_session=True)
    try:
        _record(home_config, proc, argv)
        assert server.running(home_config.paths) is None  # it does not answer /health
        assert server.stop(home_config.paths).pid == proc.pid
        assert _gone(proc) and not (home_config.paths.data_dir / "server.json").exists()
    finally:
        proc.kill()


def test_stop_leaves_a_process_that_only_reuses_the_recorded_pid(home_config: Any) -> None:
    other = subprocess.Popen([*SLEEPER, "2"], start_new_session=True)
    try:
        _record(home_config, other, ["/opt/llama-server", "--port", "8011"])  # the pid now runs another program
        assert server.stop(home_config.paths) is None
        assert other.poll() is None and not (home_config.paths.data_dir / "server.json").exists()
    finally:
        other.kill()


HEALTHY = """
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def test_ensure_refuses_a_running_server_of_another_engine(home_config: Any) -> None:
    """A vLLM server left running for the model is not taken for the llama.cpp one the settings
    ask for (adapters load differently: a gate would fail later with a stranger error)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", HEALTHY, str(port)], start_new_session=True)
    try:
        info = server.ServerInfo(proc.pid, "127.0.0.1", port, "tiny", "/m", "/l", engine="vllm")
        server.record(info, home_config.paths.data_dir / "server.json")
        deadline = time.monotonic() + 20
        while server.running(home_config.paths) is None and time.monotonic() < deadline:
            time.sleep(0.1)

        def settings(engine: str) -> Any:
            return home_config.server.model_copy(update={"engine": engine})

        assert server.ensure(settings("vllm"), home_config.paths, "tiny").pid == proc.pid  # reused
        with pytest.raises(server.ServerError, match="serves tiny with vllm, not llama.cpp"):
            server.ensure(settings("llama.cpp"), home_config.paths, "tiny")
        assert proc.poll() is None  # refused, not stopped
    finally:
        proc.kill()
