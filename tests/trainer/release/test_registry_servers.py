"""Several servers serve the same base: two real vLLM servers on the tiny model, each with its
own data dir (own server state) but one adapter registry (the second data dir's `adapters`
is a link to the first's, as a shared filesystem would be on several hosts). Each client
hot-loads the promoted version into the server it talks to, and says so; after a new promotion
both move on."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.serving import connect, hot_load, models, server
from assistant.settings import PathsSettings
from tests.conftest import free_port, make_random_adapter
from trainer.release.registry import Registry

pytestmark = [pytest.mark.server, pytest.mark.slow]


def _promote(registry: Registry, model_dir: Path, tmp: Path, seed: int) -> str:
    adapter = make_random_adapter(model_dir, tmp / f"adapter-{seed}", seed=seed)
    item = registry.register(adapter, {"base_model": "tiny"})
    registry.promote(item.version, "test: several servers")
    return item.name


def test_two_servers_each_hot_load_the_promoted_version(tmp_path: Path, test_config) -> None:
    cache = test_config.paths.cache_dir
    first, second = (
        PathsSettings(data_dir=tmp_path / "host1", cache_dir=cache),
        PathsSettings(data_dir=tmp_path / "host2", cache_dir=cache),
    )
    registry = Registry(first.data_dir / "adapters")
    registry.root.mkdir(parents=True, exist_ok=True)
    second.data_dir.mkdir(parents=True, exist_ok=True)
    (second.data_dir / "adapters").symlink_to(registry.root, target_is_directory=True)
    model_dir = models.resolve("tiny", test_config.paths)
    procs = []
    try:
        hosts = []
        for paths in (first, second):
            settings = test_config.server.model_copy(update={"port": free_port()})
            info, proc = server.start(settings, paths, "tiny", progress=lambda _: None)
            procs.append(proc)
            hosts.append((settings, paths, info.api_base))

        for seed in (1, 2):
            name = _promote(registry, model_dir, tmp_path, seed)
            for settings, paths, api_base in hosts:
                said: list[str] = []
                client = connect.resolve_client(
                    test_config.model, "tiny", server=settings, paths=paths, progress=said.append
                )
                assert client.display_name == name and client.api_base == api_base
                # the client says it is not talking to the bare model it was started with
                assert connect.hot_notice("tiny", name) in said
                assert name in hot_load.served_models(api_base)
                reply = client.chat([{"role": "user", "content": "Say hi."}], temperature=0.0, max_tokens=4)
                assert reply.completion_tokens > 0
    finally:
        for proc in procs:
            server.stop_process(proc)
