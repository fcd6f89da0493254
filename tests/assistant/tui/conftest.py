"""Fixtures of the TUI tests: the app on a temporary store with the session's real
sandbox and a scripted model (see tui_support)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.assistant.tui.tui_support import SUM, make_app


@pytest.fixture
def tui(cobalt_home: Path, sandbox: Any) -> Iterator[Any]:
    """`tui(client, problem=SUM, turns=3)` -> a CobaltApp (its store is closed afterwards)."""
    stores = []

    def factory(client: Any = None, problem: str | None = SUM, turns: int = 3, **kwargs: Any) -> Any:
        app, store = make_app(cobalt_home, sandbox, client, problem=problem, turns=turns, **kwargs)
        stores.append(store)
        return app

    yield factory
    for store in stores:
        store.close()
