"""#17 leftovers: the result pane says when text is out of sight and scrolls; the Settings footer
fits 80 columns with its own keys (Pilot on the demo recording, no model)."""

from __future__ import annotations

from agentui.ui.settings import SettingsScreen
from tests.ui.test_product import _replayed
from tests.ui.test_snapshots import replay_app


async def test_result_pane_shows_that_more_is_below_and_scrolls():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _replayed(pilot)
        await pilot.pause(0.2)
        box = app.query_one("#result-box")
        title = str(app.query_one("#result-title").render())
        assert box.max_scroll_y > 0 and box.show_vertical_scrollbar  # was: rows cut, nothing scrolls
        assert f"↓ {box.max_scroll_y} more" in title, title
        box.focus()
        await pilot.press("end")
        await pilot.pause(0.2)
        assert box.scroll_y == box.max_scroll_y
        title = str(app.query_one("#result-title").render())
        assert "above" in title and "more" not in title, title
        assert "wall " in app.export_screenshot().replace("&#160;", " ")  # the table's last row


async def test_result_pane_title_is_plain_when_everything_fits():
    app = replay_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await _replayed(pilot)
        await pilot.pause(0.2)
        assert app.query_one("#result-box").max_scroll_y == 0
        assert str(app.query_one("#result-title").render()) == "result"


async def test_settings_footer_fits_80_columns_and_names_save():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _replayed(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause(0.3)
        assert isinstance(app.screen, SettingsScreen)
        shown = [b.binding.description for b in app.screen.active_bindings.values() if b.binding.show]
        assert shown == ["Back", "Check", "Save", "Quit", "Help"], shown
        footer = app.export_screenshot().replace("&#160;", " ")
        assert "Save" in footer and "palette" in footer and "Hist" not in footer and "Memory" not in footer


async def test_every_screen_footer_fits_80_columns():
    """No key label is cut or hidden behind the palette key at 80 columns (the newcomer's
    `^g Histor▏`; Memory, Audit, Task detail, Help and History cut theirs on main)."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _replayed(pilot)
        for key in ("ctrl+o", "ctrl+g", "ctrl+r", "ctrl+d", "f1", "ctrl+s", "f2", None):
            if key:
                await pilot.press(key)
                await pilot.pause(0.3)
            keys = list(app.screen.query_one(Footer).query(FooterKey))
            palette = [k for k in keys if k.description == "palette"]
            edge = palette[0].region.x if palette else 80
            cut = [k.description for k in keys if k not in palette and k.region.right > edge]
            assert not cut, (type(app.screen).__name__, cut)
            if key:
                await pilot.press("escape")
                await pilot.pause(0.2)
