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
