"""`cobalt bench serve --adapter vN`: the promoted-adapter speed question of issue 13, in one
run: vLLM tok/s (one request, and C in flight) of the bare base model, of the adapter
hot-loaded as a LoRA, and of its merged checkpoint (`v<N>/merged`, made at promote time);
prints merged/base and hot-loaded/base. Servers are started for the run in a temporary data
directory (the user's server is left alone). Measures only; merges nothing.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from assistant.errors import UserError
from assistant.serving import adapters, hot_load, server
from assistant.settings import PathsSettings

if TYPE_CHECKING:
    from assistant.settings import Settings

Requests = Callable[[str, str, list[str], int, int], Any]


def adapter_dirs(settings: Settings, base: str, adapter: str) -> tuple[Path, Path]:
    """(adapter directory, merged checkpoint directory) of a registered version."""
    found = adapters.registered_version(adapters.adapters_root(settings.paths.data_dir), base, adapter)
    if found is None:
        raise UserError(f"adapter {adapter!r} is not a registered version of {base} (see `cobalt adapters list`)")
    path = found[1]
    merged = path / "merged"
    if not (merged / "config.json").is_file():
        raise UserError(
            f"adapter {adapter} has no merged checkpoint; promote it with server.serve_merged on, "
            "or run `cobalt adapters promote` again"
        )
    return path, merged


def _speeds(
    requests: Requests, api_base: str, name: str, prompts: list[str], tokens: int, single: int, concurrency: int
) -> dict[str, float]:
    asyncio.run(requests(api_base, name, prompts[:1], 8, 1))  # warm-up
    s_tok, s_time = asyncio.run(requests(api_base, name, prompts[:single], tokens, 1))
    c_tok, c_time = asyncio.run(requests(api_base, name, prompts, tokens, concurrency))
    return {"single_tok_s": round(s_tok / s_time, 2), "concurrent_tok_s": round(c_tok / c_time, 2)}


def measure_adapter(
    settings: Settings,
    model: str,
    adapter: str,
    requests: Requests,
    prompts: list[str],
    tokens: int,
    single: int,
    concurrency: int,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    path, merged = adapter_dirs(settings, model, adapter)
    out: dict[str, Any] = {"model": model, "adapter": adapter, "tokens_per_request": tokens, "concurrency": concurrency}
    with tempfile.TemporaryDirectory(prefix="cobalt-bench-adapter-") as home:
        paths = PathsSettings(data_dir=Path(home), cache_dir=settings.paths.cache_dir)
        for label, target in (("base", model), ("merged", str(merged))):
            info, proc = server.start(settings.server, paths, target, port=server.free_port(), progress=progress)
            try:
                progress(f"{label}: measuring ...")
                out[label] = _speeds(requests, info.api_base, info.model, prompts, tokens, single, concurrency)
                if label == "base":
                    hot_load.load_adapter(info.api_base, "bench-hot-loaded", path)
                    progress("hot-loaded adapter: measuring ...")
                    out["hot_loaded"] = _speeds(
                        requests, info.api_base, "bench-hot-loaded", prompts, tokens, single, concurrency
                    )
            finally:
                server.stop_process(proc)
    for label in ("merged", "hot_loaded"):
        out[f"{label}_vs_base"] = {k: round(out[label][k] / out["base"][k], 2) for k in out["base"]}
    out["target_merged_vs_base"] = 0.9
    return out
