"""Choose the chat client for a model name: a litellm provider id (`openai/gpt-4o-mini`)
goes to litellm as is; a local model (built-in, prepared or a checkpoint directory) goes
to the local vLLM server, started or reused, through its promoted LoRA adapter or the one
asked for, hot-loaded when the server lacks it.

The server's process lifecycle is `assistant.serving.server`; the registry's layout on disk is
`assistant.serving.adapters`. This module decides and connects; it starts nothing itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from assistant.serving import adapters, llama_server, models
from assistant.serving.chat import ChatClient
from assistant.serving.hot_load import load_adapter, served_models
from assistant.serving.server import ServerError, ServerInfo, ensure, running
from assistant.serving.token_bias import triple_quote_ban

if TYPE_CHECKING:
    from assistant.settings import ModelSettings, PathsSettings, ServerSettings


def is_provider_model(name: str) -> bool:
    """A litellm provider id such as `openai/gpt-4o-mini` (not a local path or model)."""
    return "/" in name and not Path(name).expanduser().exists() and name.split("/")[0].isidentifier()


def resolve_client(
    settings: ModelSettings,
    model: str | None = None,
    *,
    server: ServerSettings,
    paths: PathsSettings,
    adapter: str | None = None,
    progress: Callable[[str], None] = print,
) -> ChatClient:
    """A ChatClient for a local model (starting or reusing the server) or a provider id.
    With no `adapter`, a local model is served through its promoted adapter, if any
    (hot-loaded when the server lacks it); `adapter="base"` forces the bare base model."""
    name = model or settings.name
    common = settings.client_options()
    is_local = name in models.catalog() or models.is_prepared(name, paths) or Path(name).expanduser().is_dir()
    if not is_local and is_provider_model(name):
        return ChatClient(name, display_name=name, **common)
    root = adapters.adapters_root(paths.data_dir)
    merged = adapter is None or serves_merged(running(paths), root, adapter)
    info = ensure(server, paths, name, progress=progress, merged=merged)
    if info.engine == "llama.cpp":
        return _llama_client(info, settings, server, paths, adapter, progress)
    if info.merged:  # the promoted adapter merged into the base, at full speed
        entry = adapters.current_adapter(root, info.model)
        if entry is None or entry["name"] != info.merged:  # rolled back (to the base too) since it started
            wanted = entry["name"] if entry is not None else "the bare base model"
            progress(f"the server serves {info.merged} merged; restart it (`cobalt serve --stop`) to serve {wanted}")
        client = ChatClient(
            f"hosted_vllm/{info.merged}",
            api_base=info.api_base,
            display_name=info.merged,
            **common,
            logit_bias=local_bias(settings, info.model_path),
        )
        client.adapter_version = info.merged
        client.tokenizer_dir = str(info.model_path)
        client.base_model = info.model
        return client
    target = info.model if adapter in (None, "base") else adapter
    if adapter not in (None, "base"):
        served = served_models(info.api_base)
        if adapter not in served:
            target, path = registered_adapter(root, info.model, adapter)
            if target not in served:
                progress(f"loading adapter {target} into the server")
                load_adapter(info.api_base, target, path)
    if adapter is None:
        entry = adapters.current_adapter(root, info.model)
        if entry is not None:
            if entry["name"] not in served_models(info.api_base):
                load_adapter(info.api_base, entry["name"], entry["path"])
            progress(hot_notice(info.model, entry["name"]))
            target = entry["name"]
    client = ChatClient(
        f"hosted_vllm/{target}",
        api_base=info.api_base,
        display_name=target,
        **common,
        logit_bias=local_bias(settings, info.model_path),
    )
    client.adapter_version = None if target == info.model else target
    client.tokenizer_dir = str(info.model_path)
    client.base_model = info.model
    return client


def _llama_client(
    info: ServerInfo,
    settings: ModelSettings,
    server: ServerSettings,
    paths: PathsSettings,
    adapter: str | None,
    progress: Callable[[str], None],
) -> ChatClient:
    """A client of a llama-server: the base, or an adapter chosen per request by its `lora` field
    (loaded, by a restart of the server, when the server lacks it). With no `adapter`, the
    promoted one, if any (the server loads it at start)."""
    root = adapters.adapters_root(paths.data_dir)
    target, path = info.model, None
    if adapter not in (None, "base"):
        target, path = (adapter, None) if adapter in info.loras else registered_adapter(root, info.model, adapter)
    elif adapter is None:
        entry = adapters.current_adapter(root, info.model)
        if entry is not None:
            target, path = str(entry["name"]), Path(entry["path"])
    if target != info.model and target not in info.loras:
        progress(f"loading adapter {target} into the server")
        load_adapter(info.api_base, target, path or "")
        info = running(paths) or info
    client = ChatClient(
        f"hosted_vllm/{target}",
        api_base=info.api_base,
        display_name=target,
        **settings.client_options(),
        logit_bias=local_bias(settings, info.model_path),
        extra_body=llama_server.lora_request(info.loras, target, server.llama.lora_scale),
    )
    client.adapter_version = None if target == info.model else target
    client.tokenizer_dir = str(info.model_path)
    client.base_model = info.model
    return client


def engine_fields(api_base: str, name: str, server: ServerSettings) -> dict | None:
    """The request fields that choose `name` on the server at `api_base`: llama.cpp's `lora` for one
    of its adapters; None for vLLM (the model name chooses) and for the base."""
    url = api_base.removesuffix("/v1")
    if not llama_server.is_llama(url):
        return None
    return llama_server.lora_request(llama_server.loaded_loras(url), name, server.llama.lora_scale)


def engine_of(client: Any) -> str | None:
    """The engine that serves `client`: "llama.cpp" for a llama-server; None otherwise (vLLM, a
    provider, a test's fake). Stored with evaluation sessions, so that a rerun on another engine
    (another number type, a quantized GGUF) never counts one engine's sessions as another's."""
    api_base = getattr(client, "api_base", None)
    if not api_base:
        return None
    return "llama.cpp" if llama_server.is_llama(str(api_base).removesuffix("/v1")) else None


def hot_notice(model: str, promoted: str) -> str:
    """The line a client prints when it talks to the promoted adapter hot-loaded into a server of
    the bare model (started with `--adapter base`): slower than merged, and not the base."""
    return (
        f"the server serves the bare {model}: using the promoted adapter {promoted}, hot-loaded "
        "(pass `--adapter base` for the bare model; `cobalt serve --stop` then `cobalt serve` serves it merged)"
    )


def serves_merged(info: ServerInfo | None, root: Path, adapter: str) -> bool:
    """Whether the running server already serves version `adapter` merged into its base: then
    `--adapter vN` of the promoted version uses the merged checkpoint (full speed) instead of
    refusing or hot-loading a second copy of the same weights."""
    if info is None or not info.merged or adapter == "base":
        return False
    found = adapters.registered_version(root, info.model, adapter)
    return found is not None and adapters.served_name(info.model, found[0]) == info.merged


def local_bias(settings: ModelSettings, tokenizer_dir: str | Path) -> dict[int, float] | None:
    """The logit biases a client of a locally served model sends (None: none)."""
    if not settings.suppress_docstrings:
        return None

    return triple_quote_ban(str(tokenizer_dir))


def registered_adapter(root: Path, base_model: str, adapter: str) -> tuple[str, Path]:
    """(served name, directory) of the registered version `adapter` names (`vN` or
    `<base>-vN`); anything else is an error that says where adapters come from."""
    found = adapters.registered_version(root, base_model, adapter)
    if found is None:
        raise ServerError(
            f"adapter {adapter!r} is neither loaded in the server nor a registered version of "
            f"{base_model} (see `cobalt adapters list`)"
        )
    version, path, trained_on = found
    if trained_on is not None and adapters.served_base_name(trained_on) != base_model:
        raise ServerError(f"adapter v{version} was trained on {trained_on}, not on {base_model}")
    return adapters.served_name(base_model, version), path
