"""Private model servers for one job, beside the data dir's own (`assistant.serving.server`):
a vLLM server of a merged checkpoint for a `with` block (the promotion gate's candidates), and a
llama-server of a GGUF file with LoRA files for a caller that stops it itself (training
rollouts). Their state and logs live in a scratch folder, never in the data dir's `server.json`,
so the data dir's server is neither reused nor disturbed."""

from __future__ import annotations

import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from assistant.serving import llama_server
from assistant.serving.server import (
    ServerError,
    ServerInfo,
    free_port,
    start_once,
    start_variants,
    state_file,
    stop_process,
)

if TYPE_CHECKING:
    from assistant.settings import PathsSettings, ServerSettings


@contextmanager
def serving(
    server: ServerSettings,
    paths: PathsSettings,
    checkpoint: Path,
    name: str,
    progress: Callable[[str], None] = print,
) -> Iterator[ServerInfo]:
    """A private server of the checkpoint directory `checkpoint`, served as `name` on a free port,
    for the `with` block only (e.g. the promotion gate's merged adapters, one at a time). Its state
    and log live under `<data>/servers/<name>/`, not in the data dir's `server.json`, so the
    data dir's own server is neither reused nor disturbed; it is stopped when the block ends."""
    scratch = paths.data_dir / "servers" / name
    scratch.mkdir(parents=True, exist_ok=True)
    private = paths.model_copy(update={"data_dir": scratch})
    port = free_port(server.host)
    log = scratch / f"server-{port}.log"
    if llama_server.engine(server) == "llama.cpp":
        raise ServerError("llama.cpp serves adapters as GGUF LoRA files on the quantized base, not merged checkpoints")
    progress(f"starting vLLM on {name} ({checkpoint}) at http://{server.host}:{port} (log: {log}) ...")
    info, proc = start_variants(server, private, checkpoint, name, port, log, progress, name, None)
    try:
        yield info
    finally:
        stop_process(proc)
        state_file(private).unlink(missing_ok=True)


def start_private_llama(
    server: ServerSettings,
    paths: PathsSettings,
    gguf: Path,
    name: str,
    scratch: Path,
    loras: dict[str, str] | None = None,
    progress: Callable[[str], None] = print,
) -> tuple[ServerInfo, subprocess.Popen]:
    """A llama-server of the GGUF file `gguf` (with the GGUF LoRA files of `loras`) on a free port,
    its state and log under `scratch`, not the data dir's `server.json` (e.g. training rollouts);
    the caller stops it (`stop_process`)."""
    scratch.mkdir(parents=True, exist_ok=True)
    private = paths.model_copy(update={"data_dir": scratch})
    port = free_port(server.host)
    argv_env = llama_server.command(gguf, name, server, port, paths.cache_dir, loras)
    log = scratch / f"server-{port}.log"
    return start_once(server, private, argv_env, name, gguf, log, progress, None, engine="llama.cpp")
