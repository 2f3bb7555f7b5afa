"""`agentui mcp add|remove`: edit the `[mcp.servers.<name>]` tables of config.toml in place.

Only the named server's tables are written or cut out; every other line (and its comments) is
kept. The result is parsed and validated before it replaces the file, so a bad edit never lands.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any


class ConfigEditError(Exception):
    pass


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_str(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise ConfigEditError(f"cannot write {type(value).__name__} to TOML")


def server_table(name: str, entry: dict[str, Any]) -> str:
    lines = [f"[mcp.servers.{name}]"]
    for key, value in entry.items():
        if value in (None, [], {}):
            continue
        lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _header_of(line: str) -> str | None:
    m = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$", line)
    return re.sub(r"\s*\.\s*", ".", m.group(1)).replace('"', "") if m else None


def _validate(text: str, file: Path) -> dict[str, Any]:
    from pydantic import ValidationError

    from agentui.config import Config, ConfigError, _first_error

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigEditError(f"{file} is not valid TOML ({e}); fix it first") from e
    try:
        Config.model_validate(data)
    except ValidationError as e:
        key, msg = _first_error(e)
        raise ConfigEditError(str(ConfigError(msg, key=key, source=str(file)))) from e
    return data


def _write(file: Path, text: str) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(file.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    os.replace(tmp, file)


def add_server(file: Path, name: str, entry: dict[str, Any]) -> None:
    text = file.read_text(encoding="utf-8") if file.is_file() else ""
    current = _validate(text, file)
    if name in current.get("mcp", {}).get("servers", {}):
        raise ConfigEditError(f"MCP server '{name}' already exists in {file}; "
                              f"remove it first: agentui mcp remove {name}")
    new = (text.rstrip("\n") + "\n\n" if text.strip() else "") + server_table(name, entry)
    _validate(new, file)
    _write(file, new)


def remove_server(file: Path, name: str) -> None:
    if not file.is_file():
        raise ConfigEditError(f"no MCP server '{name}': {file} does not exist")
    text = file.read_text(encoding="utf-8")
    if name not in _validate(text, file).get("mcp", {}).get("servers", {}):
        raise ConfigEditError(f"no MCP server '{name}' in {file} (see: agentui mcp list)")
    ours = f"mcp.servers.{name}"
    kept: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        header = _header_of(line)
        if header is not None:
            skipping = header == ours or header.startswith(ours + ".")
        if not skipping:
            kept.append(line)
    new = re.sub(r"\n{3,}", "\n\n", "".join(kept))
    new = new.rstrip("\n") + "\n" if new.strip() else ""
    data = _validate(new, file)
    if name in data.get("mcp", {}).get("servers", {}):
        raise ConfigEditError(f"MCP server '{name}' is not written as a [{ours}] table in {file}; "
                              "edit the file by hand")
    _write(file, new)
