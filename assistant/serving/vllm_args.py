"""The latency options of the vLLM command line (docs/serving.md, issue 13), from the
`server` settings section:

- n-gram (prompt-lookup) speculative decoding (`speculative:`): repair turns copy most of
  the previous program from the context, so proposals from the prompt are often accepted
  and one weight pass yields several tokens;
- prefix caching (`prefix_caching`): the turns of a session share their whole prefix;
- preloaded allocator/OpenMP libraries (`preload`): vLLM-CPU asks for libtcmalloc and
  libiomp in LD_PRELOAD; each one found on this machine is preloaded, missing ones are skipped.

`variants` gives the option sets to try in order: a server that refuses speculative
decoding is started again without it (`assistant.serving.server.start` does the retry). This module
builds arguments only; it starts nothing.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
