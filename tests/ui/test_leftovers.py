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
