"""llama.cpp's OpenAI-compatible server (`llama-server`) as Cobalt's CPU engine: its command line,
which engine a machine serves with, and adapters chosen per request.

llama-server serves the GGUF file kept in a prepared model's directory (no conversion), speaks
the OpenAI API (litellm talks to it as to vLLM), decodes `server.llama.parallel` slots together
and reuses a session's cached prefix. Adapters are GGUF LoRA files (`assistant.serving.llama_lora`
converts a PEFT adapter) loaded at start with `--lora` and scale 0 (`--lora-init-without-apply`);
a request chooses one with its `lora` field ([{"id": k, "scale": s}]; adapters not named stay at
0), so several versions serve side by side from one copy of the base weights. llama-server cannot
open a new LoRA file while it runs, so loading one more adapter restarts it with the longer list
(a second or two for a GGUF that is already in the page cache); `assistant.serving.server` does
the restart. The served names of the adapters are the files' stems.

This module builds arguments and speaks to a running llama-server; it starts no process itself.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.serving import llama_build
from assistant.serving.device import on_gpu

if TYPE_CHECKING:
    from assistant.settings import ServerSettings

ENGINES = ("vllm", "llama.cpp")


def engine(server: ServerSettings) -> str:
    """The engine this machine serves with: the configured one, or for `auto` vLLM where CUDA
    answers and llama.cpp on CPU."""
    if server.engine != "auto":
        return server.engine
    return "vllm" if on_gpu() else "llama.cpp"


def serves_merged(server: ServerSettings, wanted: bool) -> bool:
    """Whether an adapter is served merged into its base: when `wanted` (`server.serve_merged`,
    `gate.serve_merged`) and the engine is vLLM; llama.cpp serves it as a GGUF LoRA on the
    quantized base, never a merged checkpoint."""
    return wanted and engine(server) == "vllm"


def threads(server: ServerSettings) -> int:
    return server.llama.threads or os.cpu_count() or 2


def command(
    gguf: Path,
    served_name: str,
    server: ServerSettings,
    port: int,
    cache_dir: Path,
    loras: dict[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The llama-server command line and environment; `loras` maps served name -> GGUF LoRA file,
    loaded in that order (a request's `lora` id is the position)."""
    ls = server.llama
    argv = [
        str(llama_build.binary(cache_dir)),
        "--model",
        str(gguf),
        "--alias",
        served_name,
        "--host",
        server.host,
        "--port",
        str(port),
        "--threads",
        str(threads(server)),
        "--threads-batch",
        str(threads(server)),
        "--parallel",
        str(ls.parallel),
        "--ctx-size",
        str(server.max_model_len * ls.parallel),
        "--batch-size",
        str(ls.batch_size),
        "--ubatch-size",
        str(ls.batch_size),
        "--cache-reuse",
        str(ls.cache_reuse),
        "--jinja",
        "--no-webui",
        "--metrics",
    ]
    if ls.speculative != "none":
        argv += ["--spec-type", ls.speculative]
    for path in (loras or {}).values():
        argv += ["--lora", str(path)]
    if loras:
        argv.append("--lora-init-without-apply")
    env = dict(os.environ, LLAMA_ARG_HOST=server.host)
    return argv, env


def lora_request(loras: list[str], name: str, scale: float = 1.0) -> dict[str, Any] | None:
    """The request body's extra field that applies the adapter served as `name` and no other (every
    loaded adapter is named, the others at scale 0: a request without the field gets the server's
    start-up scales); None when the server holds no adapter."""
    if not loras:
        return None
    return {"lora": [{"id": i, "scale": scale if lora == name else 0.0} for i, lora in enumerate(loras)]}


def loaded_loras(url: str) -> list[str]:
    """The served names (file stems) of the adapters a running llama-server holds, in id order."""
    import httpx  # heavy third-party: imported when the server is spoken to

    response = httpx.get(url + "/lora-adapters", timeout=10)
    response.raise_for_status()
    ordered = sorted(response.json(), key=lambda a: a["id"])
    return [Path(a["path"]).stem for a in ordered]


def is_llama(url: str) -> bool:
    """Whether the server at `url` (no /v1) is a llama-server (its /props answers; vLLM's does not)."""
    import httpx  # heavy third-party: imported when the server is spoken to

    try:
        return httpx.get(url + "/props", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False
