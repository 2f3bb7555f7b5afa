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
