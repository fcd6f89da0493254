"""Adapters in a running model server, for both engines: which names it serves, loading one under
a new name, unloading one.

vLLM hot-loads and unloads a PEFT adapter through its API (`VLLM_ALLOW_RUNTIME_LORA_UPDATING`).
llama-server cannot open a LoRA file while it runs: loading converts the adapter to a GGUF LoRA
(`assistant.serving.llama_lora`, once) and restarts the server with the longer list, found through
its record (`assistant.serving.server`); the ids of the adapters already loaded stay the same, so a
client's `lora` field keeps choosing the same weights. Restarts of one server take turns (a lock
beside its record), each adding to the list the one before it left, so two commands loading at once
both get their adapter. A restart drops requests in flight: load before a run, as the gate does.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import time
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Iterator

from assistant.serving import llama_lora, llama_server
from assistant.serving.server import ServerError, ServerInfo, healthy, last_error, port_index, record, stop_process


def served_models(api_base: str) -> list[str]:
    """The names a request may ask for: the model, and its loaded adapters (vLLM lists them under
    /v1/models; llama-server lists only its alias, its adapters are the LoRA files' stems)."""
    import httpx  # heavy third-party: imported when the server is spoken to

    try:
        response = httpx.get(api_base + "/models", timeout=10)
        response.raise_for_status()
        names = [m["id"] for m in response.json()["data"]]
        url = api_base.removesuffix("/v1")
        if llama_server.is_llama(url):
            names = names[:1] + llama_server.loaded_loras(url)
    except httpx.HTTPError as exc:
        raise ServerError(f"cannot reach the model server at {api_base}: {exc}") from None
    return names


def _llama_record(api_base: str) -> ServerInfo | None:
    """The record of the llama-server behind `api_base`, found through the port index, or None."""
    try:
        port = int(api_base.removesuffix("/v1").rsplit(":", 1)[1])  # `http://host/v1` has none: not ours
        state = Path(port_index(port).read_text().strip())
        info = ServerInfo(**json.loads(state.read_text()))
    except (FileNotFoundError, ValueError, TypeError, IndexError):
        return None
    return info if info.engine == "llama.cpp" and info.port == port else None


@contextmanager
def _restarting(api_base: str) -> Iterator[ServerInfo | None]:
    """The llama-server's record read under its restart lock (flock on `<record>.restart.lock`),
    so the record is the one the last restart left; None when no llama-server runs there."""
    found = _llama_record(api_base)
    if found is None:
        yield None
        return
    with open(f"{found.state}.restart.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield _llama_record(api_base)


def restart_with_loras(info: ServerInfo, loras: dict[str, str], progress: Callable[[str], None] = print) -> ServerInfo:
    """Restart a llama-server with `loras` (served name -> GGUF LoRA file) added after the ones it
    holds (their ids unchanged); the record is rewritten with the new pid."""
    argv = list(info.argv)
    if "--lora-init-without-apply" not in argv:
        argv.append("--lora-init-without-apply")
    for path in loras.values():
        argv += ["--lora", str(path)]
    stop_process(info.pid)
    log = Path(info.log)
    progress(f"restarting llama.cpp at {info.url} with adapter(s) {', '.join(loras)}")
    with open(log, "a") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    new = ServerInfo(**{**asdict(info), "pid": proc.pid, "argv": argv, "loras": [*info.loras, *loras]})
    deadline = time.monotonic() + 600
    try:
        while not healthy(new.url, timeout=1.0):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise ServerError(
                    f"the llama.cpp server did not come back with adapter(s) {', '.join(loras)}: {last_error(log)}"
                )
            time.sleep(0.3)
        record(new, Path(info.state))
    except BaseException:  # Ctrl-C too: a server no record names would hold the port for good
        stop_process(proc)
        raise
    return new


def load_adapter(api_base: str, name: str, path: str | Path) -> None:
    """Load a LoRA adapter under a new name; an existing name is refused. vLLM hot-loads it;
    llama.cpp converts it to a GGUF LoRA (once) and restarts with it."""
    import httpx  # heavy third-party: imported when the server is spoken to

    taken = f"an adapter named {name!r} is already loaded; load each version under a new name"
    with _restarting(api_base) as record:
        if record is not None:  # asked under the lock: another command may be restarting it
            if name in record.loras:
                raise ServerError(taken)
            cache_dir = Path(record.argv[0]).parents[3]  # <cache>/llama.cpp/<build>/bin/llama-server
            gguf = llama_lora.gguf_lora(Path(path), Path(record.model_path), name, cache_dir)
            restart_with_loras(record, {name: str(gguf)}, progress=lambda _: None)
            return
    if name in served_models(api_base):
        raise ServerError(taken)
    response = httpx.post(
        api_base + "/load_lora_adapter", json={"lora_name": name, "lora_path": str(path)}, timeout=300
    )
    if response.status_code != 200:
        raise ServerError(f"the server refused adapter {name!r} from {path}: {response.text.strip()[:300]}")


def unload_adapter(api_base: str, name: str) -> None:
    """vLLM drops the adapter; llama.cpp keeps the file loaded at scale 0 (a request that does not
    name it never uses it) until the server's next start."""
    import httpx  # heavy third-party: imported when the server is spoken to

    if _llama_record(api_base) is not None:
        return
    response = httpx.post(api_base + "/unload_lora_adapter", json={"lora_name": name}, timeout=60)
    if response.status_code != 200:
        raise ServerError(f"the server could not unload adapter {name!r}: {response.text.strip()[:300]}")
