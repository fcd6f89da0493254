"""Which adapter `cobalt serve` and the clients serve, without starting a server: the
`cobalt.before_serve` hooks run before the default adapter is served (a failing hook is one
warning line), `--adapter base` / `model.adapter: base` skip them and serve the bare model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant import runtime
from assistant.cli import main, serve_cmd
from assistant.serving import connect, server


class Point:
    def __init__(self, name: str, func: Any) -> None:
        self.name, self.func = name, func

    def load(self) -> Any:
        return self.func


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    calls: list[tuple[str, str]] = []

    def good(settings: Any, model: str, progress: Any) -> None:
        calls.append(("good", model))

    def bad(settings: Any, model: str, progress: Any) -> None:
        raise RuntimeError("broken shipped adapter")

    points = [Point("good", good), Point("bad", bad)]
    monkeypatch.setattr(runtime, "entry_points", lambda group: points if group == runtime.SERVE_HOOKS else [])
    monkeypatch.delenv("COBALT_DEBUG", raising=False)
    return calls


def test_open_client_runs_the_hooks_only_for_the_default_adapter(
    hooks: list[tuple[str, str]], home_config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen: list[Any] = []
    monkeypatch.setattr(connect, "resolve_client", lambda *a, adapter=None, **k: chosen.append(adapter))
    said: list[str] = []
    runtime.open_client(home_config, "tiny", progress=said.append)
    assert hooks == [("good", "tiny")] and chosen == [None]
    assert said == ["warning: the bad step before serving failed (RuntimeError: broken shipped adapter)"]
    runtime.open_client(home_config, "tiny", adapter="base")
    bare = home_config.model_copy(update={"model": home_config.model.model_copy(update={"adapter": "base"})})
    runtime.open_client(bare, "tiny")
    runtime.open_client(bare, "tiny", adapter="v2")  # the command line wins over model.adapter
    assert hooks == [("good", "tiny")] and chosen == [None, "base", "base", "v2"]


@pytest.mark.parametrize(
    "argv, env, merged, hooked",
    [
        ([], {}, True, True),
        (["--adapter", "base"], {}, False, False),
        ([], {"COBALT__MODEL__ADAPTER": "base"}, False, False),
    ],
)
def test_serve_merged_by_default_and_bare_with_adapter_base(
    argv: list[str],
    env: dict[str, str],
    merged: bool,
    hooked: bool,
    cobalt_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    calls: list[Any] = []
    monkeypatch.setattr(serve_cmd, "before_serve", lambda settings, model, progress: calls.append(("hook", model)))

    def ensure(section: Any, paths: Any, model: str, merged: bool = False, **_: Any) -> Any:
        calls.append(("ensure", model, merged))
        return server.ServerInfo(1, "127.0.0.1", 1, model, "/m", "/log")

    monkeypatch.setattr(server, "ensure", ensure)
    assert main(["serve", "--model", "tiny", "--detach", *argv]) == 0
    assert calls == [*([("hook", "tiny")] if hooked else []), ("ensure", "tiny", merged)]
    assert "serving tiny" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # serve takes `base` only; clients take versions
        main(["serve", "--adapter", "v3"])
