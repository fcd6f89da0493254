"""The runtime builder: the sandbox, the chat client (the local vLLM server's or any litellm
model's) and the trajectory store, made from the loaded `Settings`.

Every command, the TUI's services, the nightly job and the benchmarks open these three
through here, so each is built one way. Heavy third-party imports (litellm, torch) happen
only when something is opened, which keeps `cobalt --help` fast. This module opens
things; it neither loads settings (`assistant.settings_loader`) nor runs sessions.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from assistant.console import session_progress
from assistant.serving import connect
from assistant.serving.chat import ChatClient
from assistant.store.trajectory_db import Store
from sandbox import Sandbox

if TYPE_CHECKING:
    from assistant.settings import Settings

Progress = Callable[[str], None]
SERVE_HOOKS = "cobalt.before_serve"


def open_sandbox(settings: Settings, **overrides: Any) -> "Sandbox":
    """The configured Docker sandbox (raises SandboxError with a fix when it cannot run);
    keyword overrides (pool_size, limits, client, ...) win over `settings.sandbox`."""

    return Sandbox.from_config(settings.sandbox, **overrides)


def open_client(
    settings: Settings,
    model: str | None = None,
    *,
    adapter: str | None = None,
    progress: Progress | None = None,
    keep_docstrings: bool = False,
) -> "ChatClient":
    """A client for `model` (default: `settings.model.name`): a provider id goes to litellm,
    a local model to the model server (started if needed) with its promoted adapter, or with
    `adapter` (default: `model.adapter`; "base": none). Serving the promoted adapter runs the
    `before_serve` hooks first. `keep_docstrings`: no docstring ban (`model.suppress_docstrings`
    is for tasks; a user's own file keeps its docstrings), so none is built."""
    adapter = adapter if adapter is not None else settings.model.adapter
    if adapter is None:
        before_serve(settings, model or settings.model.name, progress or (lambda _: None))
    model_settings = settings.model
    if keep_docstrings:
        model_settings = model_settings.model_copy(update={"suppress_docstrings": False})
    return connect.resolve_client(
        model_settings,
        model,
        server=settings.server,
        paths=settings.paths,
        adapter=adapter,
        progress=progress or (lambda _: None),
    )


def before_serve(settings: Settings, model: str, progress: Progress) -> None:
    """Run the `cobalt.before_serve` entry points (upper packages' hooks, e.g. the trainer's
    shipped adapter import) before `model` is served with its default adapter. A hook that
    fails is reported in one line and skipped (COBALT_DEBUG=1 raises)."""
    for point in entry_points(group=SERVE_HOOKS):
        try:
            point.load()(settings, model, progress)
        except Exception as exc:  # a hook may only add an adapter, never stop serving
            if os.environ.get("COBALT_DEBUG"):
                raise
            progress(f"warning: the {point.name} step before serving failed ({type(exc).__name__}: {exc})")


def open_store(settings: Settings) -> "Store":
    """The trajectory store in the configured data directory."""
    return Store.open(settings.paths)


@contextmanager
def session_run(
    settings: Settings, label: str, quiet: bool = False
) -> Iterator[tuple["Sandbox", "Store", Callable[[int, int], None], Callable[[Any], None]]]:
    """For a command that runs many sessions: the sandbox, the store and a progress bar
    labelled `label` (hidden when `quiet`), as (sandbox, store, on_plan, on_session);
    closes all three afterwards."""

    sandbox = open_sandbox(settings)
    try:
        with open_store(settings) as store, session_progress(label, quiet) as (on_plan, on_session):
            yield sandbox, store, on_plan, on_session
    finally:
        sandbox.close()


def served_client(
    settings: Settings, api_base: str, name: str, tokenizer_dir: Path | None = None, base_model: str | None = None
) -> "ChatClient":
    """A client for the model or adapter served as `name` by the server at `api_base`
    (`tokenizer_dir`: the served model's, for `model.suppress_docstrings`; `base_model`: the
    built-in model it is or was trained on, whose own prompt wording its sessions use)."""

    bias = connect.local_bias(settings.model, tokenizer_dir) if tokenizer_dir is not None else None
    client = ChatClient(
        f"hosted_vllm/{name}",
        api_base=api_base,
        display_name=name,
        **settings.model.client_options(),
        logit_bias=bias,
        extra_body=connect.engine_fields(api_base, name, settings.server),
    )
    client.base_model = base_model
    return client
