from pathlib import Path

from agentui.ui.themes import THEME_DIR, load_themes


def test_bundled_themes_load():
    themes, problems = load_themes(THEME_DIR)
    assert problems == []
    assert {t.name for t in themes} >= {"agentui-dark", "agentui-light"}


def test_bad_theme_files_are_reported_not_fatal(tmp_path: Path):
    (tmp_path / "ok.toml").write_text('name = "ok"\nprimary = "#112233"\n')
    (tmp_path / "broken.toml").write_text("primary = [\n")
    (tmp_path / "badcolour.toml").write_text('primary = "not-a-colour"\n')
    (tmp_path / "extra.toml").write_text('primary = "#000000"\nsparkle = true\n')
    themes, problems = load_themes(tmp_path)
    assert [t.name for t in themes] == ["ok"]
    assert sorted(p.split(":")[0] for p in problems) == ["theme badcolour.toml", "theme broken.toml",
                                                         "theme extra.toml"]


def test_every_message_type_is_readable_in_every_theme():
    """WCAG 2.x contrast ≥ 4.5:1 for each bus message type's colour on the theme's background and
    surface (the light theme once drew ExecutionResult #f7f7f7 on #fafafa)."""
    from textual.color import Color

    from agentui.contracts import PAYLOAD_TYPES
    from agentui.ui.palette import contrast, theme_colour, type_style

    themes, _ = load_themes(THEME_DIR)
    bad = []
    for t in themes:
        grounds = {"background": theme_colour(t, "background"), "surface": Color.parse(t.surface)}
        for typ in [*PAYLOAD_TYPES, "sender→receiver"]:
            fg = Color.parse(str(type_style(t, "TaskStarted" if typ == "sender→receiver" else typ).color.name))
            for gname, bg in grounds.items():
                ratio = contrast(fg, bg)
                if ratio < 4.5:
                    bad.append(f"{t.name}: {typ} {fg.hex} on {gname} {bg.hex} = {ratio:.2f}")
    assert not bad, "\n".join(bad)


def test_contrast_formula_matches_wcag_reference_values():
    from textual.color import Color

    from agentui.ui.palette import contrast

    assert round(contrast(Color.parse("#000000"), Color.parse("#ffffff")), 1) == 21.0
    assert round(contrast(Color.parse("#777777"), Color.parse("#ffffff")), 2) == 4.48
    assert round(contrast(Color.parse("#f7f7f7"), Color.parse("#fafafa")), 2) == 1.03


def _256(c):
    """The colour a 256-colour terminal shows (tmux without COLORTERM): Rich's downsampling."""
    from rich.color import Color as RichColor
    from rich.color import ColorSystem
    from textual.color import Color

    t = RichColor.parse(c.hex6).downgrade(ColorSystem.EIGHT_BIT).get_truecolor()
    return Color(t.red, t.green, t.blue)


def test_every_colour_stays_readable_after_256_colour_downsampling():
    """The same 4.5:1 after Textual/Rich map the theme to the 256-colour palette (#17: the light
    accent #a64a00 became #af5f00 on #eeeeee, 4.06:1)."""
    from textual.color import Color

    from agentui.contracts import PAYLOAD_TYPES
    from agentui.ui.palette import colour, contrast, theme_colour, type_style

    themes, _ = load_themes(THEME_DIR)
    bad = []
    for t in themes:
        grounds = {"background": theme_colour(t, "background"), "surface": Color.parse(t.surface)}
        fgs = {typ: Color.parse(str(type_style(t, typ).color.name)) for typ in [*PAYLOAD_TYPES, "TaskStarted"]}
        fgs.update({f"${n}": Color.parse(colour(t, n)) for n in ("warning", "error", "success", "foreground")})
        for name, fg in fgs.items():
            for gname, bg in grounds.items():
                ratio = contrast(_256(fg), _256(bg))
                if ratio < 4.5:
                    bad.append(f"{t.name}: {name} {_256(fg).hex} on {gname} {_256(bg).hex} = {ratio:.2f}")
    assert not bad, "\n".join(bad)


async def test_audit_lines_take_the_new_theme_colours(tmp_path):
    """A warning written under the dark theme is redrawn in the light theme's colour on a switch."""
    from agentui.contracts import AuditEvent
    from agentui.ui.palette import colour
    from agentui.ui.widgets import AuditFeed
    from tests.ui.test_app import SIZE, wait_for
    from tests.ui.test_product import _no_llm_app

    app = _no_llm_app(tmp_path, tmp_path / "c.toml")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        app.theme = "agentui-dark"
        await pilot.pause(0.1)
        feed = app.query_one(AuditFeed)
        feed.add(AuditEvent.model_validate({"event_id": "e1", "ts": "2026-01-01T00:00:00Z", "kind": "parse_repair_rate",
                                            "severity": "warning",
                                            "message": "replies needed repair"}))
        await pilot.pause(0.1)
        app.theme = "agentui-light"
        await pilot.pause(0.2)
        light = colour(app.current_theme, "warning").lower()
        styles = {str(seg.style.color.name).lower() for line in feed.lines for seg in line
                  if seg.style and seg.style.color and "warning" in seg.text}
        assert styles == {light}, styles


async def test_an_audit_report_written_while_the_pane_is_hidden_reads_whole_once_it_shows(tmp_path):
    """At 80×24 the audit pane is hidden; a report written then used to wrap a letter a row, and
    stayed so when the window grew."""
    from agentui.contracts import AuditReport
    from agentui.ui.widgets import AuditFeed
    from tests.ui.test_app import wait_for
    from tests.ui.test_product import _no_llm_app

    app = _no_llm_app(tmp_path, tmp_path / "c.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        feed = app.query_one(AuditFeed)
        feed.add(AuditReport.model_validate({"report_id": "r1", "ts": "2026-01-01T00:00:00Z", "trigger": "periodic",
                                             "window_end": "2026-01-01T00:00:00Z",
                                             "summary": "normal operation, 12 messages, 1 tasks"}))
        await pilot.pause(0.1)
        await pilot.resize_terminal(160, 40)
        await pilot.pause(0.3)
        rows = ["".join(seg.text for seg in line).strip() for line in feed.lines]
        assert any("normal operation, 12 messages" in r for r in rows), rows
