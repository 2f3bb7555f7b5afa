"""Writing config.toml (the TUI's settings screen) and keeping API keys out of it.

`write_config` merges dotted-key updates into the file, keeping every other key, validates the
result against the Config model before anything is written, and replaces the file atomically.
An API key is never written to a file in clear: `store_api_key` puts it in the OS keychain
(macOS `security`, Linux `secret-tool`) when one is present; otherwise the user is told which
environment variable to set. `detect_servers` lists local OpenAI-compatible servers (Ollama,
LM Studio, a llama.cpp server) and the models each offers (GET /v1/models).
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentui.config import Config, ConfigError, _first_error, _set_dotted

KEYCHAIN_SERVICE = "agentui"


class SecretInConfig(ConfigError):
    """An API key was about to be written to a file."""


# -- TOML out ------------------------------------------------------------------------------------
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else _str(k)


def _str(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"')
    out = "".join(c if c >= " " and c != "\x7f" else f"\\u{ord(c):04x}" for c in out)
    return f'"{out}"'


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError("TOML here holds finite numbers only")
        return repr(v)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise ValueError(f"cannot write {type(v).__name__} to TOML")


def dumps_toml(doc: Mapping[str, Any]) -> str:
    """Tables after scalars, keys in their existing order: enough for config.toml's shape."""
    lines: list[str] = []

    def table(d: Mapping[str, Any], prefix: str) -> None:
        scalars = [(k, v) for k, v in d.items() if not isinstance(v, Mapping)]
        subs = [(k, v) for k, v in d.items() if isinstance(v, Mapping)]
        if prefix and (scalars or not subs):
            lines.append(f"\n[{prefix}]")
        for k, v in scalars:
            lines.append(f"{_key(k)} = {_value(v)}")
        for k, v in subs:
            table(v, f"{prefix}.{_key(k)}" if prefix else _key(k))

    table(doc, "")
    return "\n".join(lines).lstrip("\n") + "\n"


def _is_secret(key: str) -> bool:
    return key.rsplit(".", 1)[-1] in ("api_key", "apikey", "token", "password")


def _drop(d: dict[str, Any], key: str) -> None:
    parts = key.split(".")
    for p in parts[:-1]:
        d = d.get(p)  # type: ignore[assignment]
        if not isinstance(d, dict):
            return
    d.pop(parts[-1], None)


def _prune(d: dict[str, Any]) -> None:
    for k in list(d):
        if isinstance(d[k], dict):
            _prune(d[k])
            if not d[k]:
                del d[k]


def write_config(path: Path, updates: Mapping[str, Any]) -> Config:
    """Merge `updates` (dotted keys; None removes the key) into the TOML file at `path`.

    Every other key is kept. The merged document must validate, and no key may hold a secret;
    otherwise ConfigError and the file is untouched. Returns the file's Config."""
    path = Path(path).expanduser()
    doc: dict[str, Any] = {}
    if path.is_file():
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"cannot update it: {e}", source=str(path)) from e
    for key, val in updates.items():
        if val is None or val == "":
            _drop(doc, key)
        elif _is_secret(key):
            raise SecretInConfig("API keys are never written to a file: use the OS keychain or an "
                                 "environment variable (AGENTUI_API_KEY)", key=key, source=str(path))
        else:
            _set_dotted(doc, key, val)
    _prune(doc)
    try:
        cfg = Config.model_validate(doc)
    except ValidationError as e:
        key, msg = _first_error(e)
        raise ConfigError(msg, key=key, source=str(path)) from e
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(dumps_toml(doc))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return cfg


# -- the OS keychain -----------------------------------------------------------------------------
def keychain_tool() -> str | None:
    """`security` on macOS, `secret-tool` (libsecret) on Linux, or None."""
    if sys.platform == "darwin" and shutil.which("security"):
        return "security"
    if shutil.which("secret-tool"):
        return "secret-tool"
    return None


def store_api_key(account: str, secret: str, *, tool: str | None = None, timeout_s: float = 10.0) -> str:
    """Put `secret` in the keychain under (agentui, account). Returns where it went; raises
    RuntimeError with what to do instead when no keychain is available or it refuses."""
    tool = tool or keychain_tool()
    if tool is None:
        raise RuntimeError("no OS keychain here (macOS `security` or Linux `secret-tool`): "
                           "export AGENTUI_API_KEY in your shell instead")
    if tool == "security":
        # -w reads the password from the next argument; -U updates an existing item
        cmd = ["security", "add-generic-password", "-U", "-s", KEYCHAIN_SERVICE, "-a", account, "-w", secret]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        where = "the macOS keychain"
    else:
        cmd = ["secret-tool", "store", f"--label=agentui API key ({account})", "service", KEYCHAIN_SERVICE,
               "account", account]
        r = subprocess.run(cmd, input=secret, capture_output=True, text=True, timeout=timeout_s)
        where = "the Secret Service keyring"
    if r.returncode != 0:
        raise RuntimeError(f"{tool} refused ({(r.stderr or r.stdout).strip()[:200]}); export AGENTUI_API_KEY instead")
    return where


def read_api_key(account: str, *, tool: str | None = None, timeout_s: float = 5.0) -> str | None:
    tool = tool or keychain_tool()
    if tool is None:
        return None
    if tool == "security":
        cmd = ["security", "find-generic-password", "-s", KEYCHAIN_SERVICE, "-a", account, "-w"]
    else:
        cmd = ["secret-tool", "lookup", "service", KEYCHAIN_SERVICE, "account", account]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = r.stdout.strip()
    return value if r.returncode == 0 and value else None


def is_local_url(url: str) -> bool:
    """Local servers need no key, and skipping them saves a keychain subprocess."""
    return "127.0.0.1" in url or "localhost" in url or "[::1]" in url


def api_key_from_keychain(loaded: Any) -> str | None:
    """Fill `llm.api_key` from the OS keychain when none is set and the endpoint is remote: where
    Settings stored it, under the endpoint's host. `loaded` is a LoadedConfig (its sources then
    say "OS keychain (host)") or a Config. Returns the account used, or None. The TUI, `run`,
    `doctor` and `tree` all read the key this way."""
    cfg = getattr(loaded, "config", loaded)
    url = cfg.llm.base_url or ""
    if cfg.llm.api_key or not url or is_local_url(url) or not keychain_tool():
        return None
    account = key_account(url)
    key = read_api_key(account)
    if not key:
        return None
    from agentui.config import check_api_key

    try:
        cfg.llm.api_key = check_api_key(key)
    except ValueError:  # a key with control characters is never sent
        return None
    sources = getattr(loaded, "sources", None)
    if isinstance(sources, dict):
        sources["llm.api_key"] = f"OS keychain ({account})"
    return account


def key_account(base_url: str | None) -> str:
    """The keychain account a key is stored under: the endpoint's host (one key per provider)."""
    import httpx

    if not base_url:
        return "default"
    try:
        return httpx.URL(base_url if "://" in base_url else f"http://{base_url}").host or "default"
    except Exception:  # noqa: BLE001 - a malformed URL still gets a stable account
        return base_url


# -- local servers -------------------------------------------------------------------------------
KNOWN_SERVERS = (("Ollama", "http://127.0.0.1:11434/v1"), ("LM Studio", "http://127.0.0.1:1234/v1"),
                 ("llama.cpp server", "http://127.0.0.1:8080/v1"))


@dataclass
class FoundServer:
    name: str
    base_url: str
    models: list[str] = field(default_factory=list)


async def list_models(base_url: str, *, timeout_s: float = 1.0, api_key: str | None = None) -> list[str] | None:
    """The ids GET {base_url}/models lists, or None when nothing answers there."""
    import httpx

    from agentui.llm import normalise_base_url

    url = normalise_base_url(base_url).rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as c:
            r = await c.get(url, headers=headers)
    except (httpx.HTTPError, ValueError):
        return None
    if r.status_code != 200:
        return None
    try:
        data = r.json().get("data", [])
        return sorted(str(m["id"]) for m in data if isinstance(m, dict) and m.get("id"))
    except (ValueError, AttributeError, TypeError):
        return []


async def detect_servers(candidates: tuple[tuple[str, str], ...] = KNOWN_SERVERS,
                         *, timeout_s: float = 1.0) -> list[FoundServer]:
    """The local servers that answer, with their models, probed at once."""
    results = await asyncio.gather(*(list_models(url, timeout_s=timeout_s) for _, url in candidates))
    return [FoundServer(name, url, models) for (name, url), models in zip(candidates, results, strict=True)
            if models is not None]
