"""`cobalt serve`: run the model server (llama.cpp or vLLM, `server.engine`) in the foreground
(Ctrl-C/SIGTERM stop it cleanly), or `--detach` it for other commands to reuse, `--status` to
show it, `--stop` to stop it. By default it serves the promoted adapter (vLLM: merged into the
base, `server.serve_merged`; llama.cpp: its GGUF LoRA, chosen per request), after the
`before_serve` hooks (the shipped adapter's import); `--adapter base` serves the bare model."""

from __future__ import annotations

import argparse
import json
import signal
from typing import TYPE_CHECKING, Any

from assistant.console import port_number
from assistant.runtime import before_serve
from assistant.serving import server

if TYPE_CHECKING:
    from assistant.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("serve", help="serve the configured model (llama.cpp on CPU, vLLM on GPU; server.engine)")
    parser.add_argument("--model", help="model name or checkpoint directory (default: config model.name)")
    parser.add_argument("--port", type=port_number, help="port (default: config server.port)")
    parser.add_argument(
        "--adapter",
        choices=["base"],
        help="`base`: serve the bare model, not the promoted adapter merged (default: config model.adapter)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--detach", action="store_true", help="start in the background and return")
    mode.add_argument("--status", action="store_true", help="show the running server, if any")
    mode.add_argument("--stop", action="store_true", help="stop the running server")
    parser.set_defaults(func=_serve)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    paths, model = settings.paths, args.model or settings.model.name
    section = settings.server.model_copy(update={"port": args.port}) if args.port else settings.server
    if args.status:
        info = server.running(paths)
        print(json.dumps(info.__dict__ | {"url": info.url}) if info else "no server is running")
        return 0 if info else 1
    if args.stop:
        info = server.stop(paths)
        print(f"stopped {info.model} at {info.url}" if info else "no server was running")
        return 0
    merged = (args.adapter or settings.model.adapter) is None  # `base` or `vN`: clients choose
    if merged:
        before_serve(settings, model, print)
    if args.detach:
        info = server.ensure(section, paths, model, merged=merged)
        print(f"serving {info.model} at {info.api_base} (pid {info.pid})")
        return 0
    with server.start_lock(paths):
        existing = server.running(paths)
        if existing is not None:
            print(f"a server for {existing.model} already runs at {existing.url} (pid {existing.pid})")
            return 0
        info, proc = server.start(section, paths, model, merged=merged)
    print(f"serving {info.model} at {info.api_base}; Ctrl-C to stop")

    def _terminate(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    try:
        code = proc.wait()
        print(f"the server exited with code {code}; see {info.log}")
        return 1
    except KeyboardInterrupt:
        print("stopping the server ...")
        server.stop_process(proc)
        server.stop(paths)
        return 0
