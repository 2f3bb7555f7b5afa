"""The bundled theme files (package data, so a pip/pipx install has them) and the check of a
``--theme`` value — without importing textual, so every command can validate it."""

from __future__ import annotations

import tomllib
from pathlib import Path

THEME_DIR = Path(__file__).resolve().parent


def available(directory: Path | None = None) -> dict[str, str]:
    """Accepted names → theme name: each file's stem (``light``) and its ``name`` (``agentui-light``)."""
    out: dict[str, str] = {}
    for f in sorted((directory or THEME_DIR).glob("*.toml")):
        try:
            name = str(tomllib.loads(f.read_text(encoding="utf-8")).get("name") or f"agentui-{f.stem}")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue  # the UI reports a bad bundled file; it is just not a choice here
        out.setdefault(f.stem, name)
        out.setdefault(name, name)
    return out


def file_theme_name(path: Path) -> str:
    """The name a theme file registers under (its ``name``, else ``agentui-<stem>``)."""
    try:
        return str(tomllib.loads(path.read_text(encoding="utf-8")).get("name") or f"agentui-{path.stem}")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return f"agentui-{path.stem}"


def check_theme(value: str) -> str:
    """The theme name (or ``.toml`` file path) to use; ValueError with the choices otherwise."""
    names = available()
    if value in names:
        return names[value]
    p = Path(value).expanduser()
    if value.endswith(".toml") or p.is_file():
        if not p.is_file():
            raise ValueError(f"theme file {value} does not exist")
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except UnicodeDecodeError as e:
            raise ValueError(f"theme file {value} is not UTF-8 text ({e.reason} at byte {e.start})") from e
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"theme file {value} is not valid TOML ({e})") from e
        except OSError as e:
            raise ValueError(f"theme file {value} cannot be read ({e.strerror or e})") from e
        if not isinstance(data.get("primary"), str):
            raise ValueError(f"theme file {value} has no 'primary' colour (see agentui/themes/dark.toml)")
        return str(p)
    stems = sorted(k for k, v in names.items() if k != v)
    raise ValueError(f"unknown theme {value!r}; choose {', '.join(stems)} or give a .toml theme file")
