"""SVG snapshots of the main screen states (empty, running, solved, failed). A snapshot
that differs from the stored SVG fails with a diff of the screen text and the new SVG
saved beside the test's tmp_path; COBALT_UPDATE_SNAPSHOTS=1 rewrites the stored files
(review them with a browser before committing)."""

from __future__ import annotations

import asyncio
import difflib
import html
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.assistant.tui.screen_states import STATES, client_for, reach, release
from tests.assistant.tui.tui_support import SUM

pytestmark = pytest.mark.docker
SNAPSHOTS = Path(__file__).parent / "snapshots"


def svg_text(svg: str) -> list[str]:
    """The screen's text lines from a Rich SVG export (for a readable failure diff)."""
    rows: dict[str, list[tuple[float, str]]] = {}
    for y, x, text in re.findall(r'<text[^>]*x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', svg):
        rows.setdefault(x, []).append((float(y), html.unescape(text).replace("\xa0", " ")))
    return ["".join(t for _, t in sorted(parts)) for _, parts in sorted(rows.items(), key=lambda kv: float(kv[0]))]


def compare(svg: str, name: str, tmp_path: Path) -> None:
    stored = SNAPSHOTS / f"{name}.svg"
    if os.environ.get("COBALT_UPDATE_SNAPSHOTS"):
        stored.write_text(svg, encoding="utf-8")
        return
    assert stored.exists(), f"no stored snapshot {stored.name}: run with COBALT_UPDATE_SNAPSHOTS=1 and review it"
    expected = stored.read_text(encoding="utf-8")
    if svg != expected:
        actual = tmp_path / f"{name}.svg"
        actual.write_text(svg, encoding="utf-8")
        diff = "\n".join(difflib.unified_diff(svg_text(expected), svg_text(svg), "stored", "now", lineterm=""))
        pytest.fail(f"snapshot {name} changed (new SVG: {actual}); text diff:\n{diff or '(colours or styles only)'}")


@pytest.mark.parametrize("state", STATES)
def test_main_screen_snapshot(state: str, tui: Any, tmp_path: Path) -> None:
    pytest.importorskip("tree_sitter_python", reason="snapshots are taken with Python highlighting")
    app = tui(client_for(state), problem=None if state == "empty" else SUM, turns=2, cwd=tmp_path)

    async def scenario() -> str:
        async with app.run_test(size=(100, 30)) as pilot:
            try:
                await reach(state, pilot, app)
                return app.export_screenshot(title=f"Cobalt · {state}")
            finally:
                await release(app)
                await pilot.press("ctrl+k")

    compare(asyncio.run(scenario()), f"main_{state}_100x30", tmp_path)


def test_solved_snapshot_at_160x50(tui: Any, tmp_path: Path) -> None:
    pytest.importorskip("tree_sitter_python", reason="snapshots are taken with Python highlighting")
    app = tui(client_for("solved"), turns=2, cwd=tmp_path)

    async def scenario() -> str:
        async with app.run_test(size=(160, 50)) as pilot:
            await reach("solved", pilot, app)
            return app.export_screenshot(title="Cobalt · solved")

    compare(asyncio.run(scenario()), "main_solved_160x50", tmp_path)


def test_snapshot_comparison_can_fail(tmp_path: Path) -> None:
    stored = (SNAPSHOTS / "main_empty_100x30.svg").read_text(encoding="utf-8")
    with pytest.raises(pytest.fail.Exception, match="snapshot main_empty_100x30 changed"):
        compare(stored.replace("&#160;empty", "&#160;EMPTY", 1), "main_empty_100x30", tmp_path)
