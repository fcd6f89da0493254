"""Screenshot quality at 100x30 and 160x50: every pane of the main screen is on screen,
no two overlap, none is clipped by its container, and no text that matters is cut off
(border titles, status line, footer keys, results and timeline rows)."""

from __future__ import annotations

import asyncio
from itertools import combinations
from typing import Any

import pytest
from rich.text import Text
from textual.errors import NoWidget
from textual.widgets import Footer

from assistant.tui.views import status_line
from assistant.tui.widgets import ProgramEditor, ResultsTable, StatusBar, TurnTimeline
from tests.assistant.tui.screen_states import client_for, reach, release
from tests.assistant.tui.tui_support import SUM

pytestmark = pytest.mark.docker
PANES = ("#problem", "#tests", "#timeline", "#editor", "#results", "#reply", "#status", "Footer")


async def settle(app: Any, pilot: Any, tries: int = 20) -> None:
    """Pause until every footer key is laid out: after a layout change the footer recomposes
    its keys, and a key not yet in the compositor's map has no region to check."""
    for _ in range(tries):
        await pilot.pause()
        try:
            for key in app.query_one(Footer).children:
                app.screen.find_widget(key)
            return
        except NoWidget:
            continue


def check_layout(app: Any) -> list[str]:
    """Every layout fault on the current main screen, as sentences."""
    faults: list[str] = []
    screen = app.screen.region
    widgets = {name: app.query_one(name) for name in PANES}
    regions = {}
    for name, widget in widgets.items():
        geometry = app.screen.find_widget(widget)
        region = geometry.region
        regions[name] = region
        if not screen.contains_region(region):
            faults.append(f"{name} {region} leaves the {screen.size} screen")
        if geometry.visible_region != region:
            faults.append(f"{name} is clipped: {region} shows only {geometry.visible_region}")
        small = (region.height < 1) if name in ("#status", "Footer") else (region.width < 24 or region.height < 4)
        if small:
            faults.append(f"{name} is too small: {region.size}")
        title = getattr(widget, "border_title", None)
        if title and Text.from_markup(str(title)).cell_len + 4 > region.width:
            faults.append(f"{name}'s title {str(title)!r} does not fit in {region.width} columns")
    for (a, ra), (b, rb) in combinations(regions.items(), 2):
        if ra.overlaps(rb):
            faults.append(f"{a} {ra} overlaps {b} {rb}")
    status = app.query_one(StatusBar)
    if status_line(app.controller.status).cell_len > status.content_region.width:
        faults.append(f"the status line is wider than {status.content_region.width} columns")
    for key in app.query_one(Footer).children:
        geometry = app.screen.find_widget(key)
        if geometry.visible_region != geometry.region or not screen.contains_region(geometry.region):
            faults.append(f"footer key {key} is cut off at {geometry.region}")
    for scroller in (app.query_one(ResultsTable), app.query_one(TurnTimeline)):
        if scroller.max_scroll_x > 0:
            faults.append(f"#{scroller.id} needs horizontal scrolling ({scroller.max_scroll_x} columns)")
    return faults


@pytest.mark.parametrize("size", [(100, 30), (160, 50)])
@pytest.mark.parametrize("state", ["empty", "running", "failed"])
def test_nothing_overlaps_or_is_cut_off(state: str, size: tuple[int, int], tui: Any) -> None:
    app = tui(client_for(state), problem=None if state == "empty" else SUM, turns=2)

    async def scenario() -> list[str]:
        async with app.run_test(size=size) as pilot:
            try:
                await reach(state, pilot, app)
                if state == "failed":  # an edited program puts the longest title on the editor
                    app.query_one(ProgramEditor).insert("# my change\n", (0, 0))
                await settle(app, pilot)
                return check_layout(app)
            finally:
                await release(app)
                await pilot.press("ctrl+k")

    assert asyncio.run(scenario()) == []


def test_the_layout_check_can_fail(tui: Any) -> None:
    app = tui(None, problem=None)

    async def scenario() -> list[str]:
        async with app.run_test(size=(100, 30)) as pilot:
            app.query_one("#timeline").styles.height = 40  # taller than the screen
            app.query_one("#results").border_title = "x" * 90
            await settle(app, pilot)
            return check_layout(app)

    faults = asyncio.run(scenario())
    assert any("#timeline" in f and ("leaves" in f or "clipped" in f) for f in faults), faults
    assert any("title" in f for f in faults), faults
