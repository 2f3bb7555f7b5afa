"""Theme files (`agentui/themes/*.toml`, plus a `--theme FILE.toml`) → textual Themes. A bad file
is reported once, never fatal."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

from agentui.themes import THEME_DIR

_FIELDS = {"primary", "secondary", "accent", "warning", "error", "success", "foreground", "background",
           "surface", "panel", "boost", "dark"}


def load_themes(directory: Path | None = None, extra: Sequence[Path] = ()) -> tuple[list[Theme], list[str]]:
    """(themes, problems). Each problem names the file and what is wrong with it."""
    d = directory or THEME_DIR
    themes: list[Theme] = []
    problems: list[str] = []
    files = sorted(d.glob("*.toml")) if d.is_dir() else []
    for f in [*files, *extra]:
        try:
            data = tomllib.loads(f.read_text(encoding="utf-8"))
            unknown = set(data) - _FIELDS - {"name"}
            if unknown:
                raise ValueError(f"unknown key(s) {', '.join(sorted(unknown))}")
            if not isinstance(data.get("primary"), str):
                raise ValueError("'primary' colour is required")
            for key in _FIELDS - {"dark"}:
                if key in data:
                    Color.parse(str(data[key]))
            name = str(data.get("name") or f"agentui-{f.stem}")
            themes.append(Theme(name=name, **{k: v for k, v in data.items() if k in _FIELDS}))
        except (OSError, ValueError, TypeError, ColorParseError, tomllib.TOMLDecodeError) as e:
            problems.append(f"theme {f.name}: {e}")
    return themes, problems
