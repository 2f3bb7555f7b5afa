"""A project's own MCP servers: `.agentui/mcp.toml` in the workspace, beside the user's config.

The file holds `[mcp.servers.<name>]` tables like config.toml. A server in it starts a command
from a folder someone else may have written (a cloned repository), so its servers are used only
once you have trusted that exact file: `agentui mcp trust` records the file's SHA-256 in the data
dir (`mcp-trust/`, out of the workspace's reach); any change to the file makes it untrusted again.
A server of the user's own config keeps its name; a project server of the same name is left out.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from agentui.config import Config, McpServerConfig

PROJECT_FILE = Path(".agentui") / "mcp.toml"
MAX_BYTES = 256 * 1024


@dataclass
class ProjectServers:
    file: Path
    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    digest: str = ""
    trusted: bool = False
    problem: str = ""  # why the file cannot be used (unreadable, invalid)


def _trust_file(data_root: Path, workspace: Path) -> Path:
    real = os.path.realpath(workspace)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(real) or "root")[:40]
    return Path(data_root) / "mcp-trust" / f"{slug}-{hashlib.sha256(real.encode()).hexdigest()[:10]}.txt"


def load(workspace: Path | str, data_root: Path | str) -> ProjectServers | None:
    """The workspace's project servers, or None when it has no project file."""
    file = Path(workspace) / PROJECT_FILE
    if not file.is_file():
        return None
    out = ProjectServers(file)
    try:
        raw = file.read_bytes()[: MAX_BYTES + 1]
        if len(raw) > MAX_BYTES:
            raise ValueError(f"longer than {MAX_BYTES} bytes")
        data = tomllib.loads(raw.decode("utf-8"))
        tables = (data.get("mcp") or {}).get("servers") or {}
        if not isinstance(tables, dict):
            raise ValueError("[mcp.servers] is not a table")
        for name, table in tables.items():
            if not re.match(r"^[A-Za-z0-9_-]{1,40}$", name):
                raise ValueError(f"server name {name!r} must be letters, digits, '_' or '-'")
            out.servers[name] = McpServerConfig.model_validate(table)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:  # pydantic's ValidationError is a ValueError
        out.problem = f"{file}: {' '.join(str(e).split())[:300]}"
        out.servers = {}
        return out
    out.digest = hashlib.sha256(raw).hexdigest()
    trust = _trust_file(Path(data_root), Path(workspace))
    try:
        out.trusted = trust.read_text(encoding="utf-8").strip() == out.digest
    except OSError:
        out.trusted = False
    return out


def trust(project: ProjectServers, workspace: Path | str, data_root: Path | str) -> Path:
    """Record the file as it is now as trusted; returns where."""
    path = _trust_file(Path(data_root), Path(workspace))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(project.digest + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def merged(user: dict[str, McpServerConfig], workspace: Path | str, data_root: Path | str,
           notices: list[str]) -> dict[str, McpServerConfig]:
    """The user's servers plus the project's trusted ones; a notice says what was left out and why."""
    project = load(workspace, data_root)
    if project is None:
        return user
    if project.problem:
        notices.append(f"the project's MCP file is not used: {project.problem}")
        return user
    if not project.trusted:
        if project.servers:
            notices.append(f"the project file {project.file} defines MCP servers "
                           f"({', '.join(sorted(project.servers))}) that are not used until you trust it: "
                           f"agentui mcp trust --workspace {shlex.quote(str(workspace))}")
        return user
    extra = {n: c for n, c in project.servers.items() if n not in user}
    clash = sorted(set(project.servers) - set(extra))
    if clash:
        notices.append(f"the project's MCP servers {', '.join(clash)} are left out: your config has "
                       "servers of those names")
    return {**user, **extra}


def with_project_servers(config: Config, workspace: Path | str, data_root: Path | str,
                         notices: list[str]) -> Config:
    """`config` with the project's trusted servers joined (`merged`); the same object when none join."""
    servers = merged(config.mcp.servers, workspace, data_root, notices)
    if servers is config.mcp.servers:
        return config
    return config.model_copy(update={"mcp": config.mcp.model_copy(update={"servers": servers})})
