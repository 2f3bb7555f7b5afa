"""OAuth sign-in for remote (`url`) MCP servers, on the SDK's client-side OAuth flow.

The SDK's `OAuthClientProvider` does the protocol: protected-resource and authorization-server
discovery from a 401, dynamic client registration, the authorization-code grant with PKCE, and
refreshing an expired access token. What agentui adds:

- where the credentials live: one file, `mcp-oauth/credentials.json` in the user's config dir
  (0600, written atomically under a lock, keyed by the server's URL). Its name and its content
  (`refresh_token`) are both ones the safety gate treats as a secret, so no tool call reads it
  unasked.
- when a person is asked: only `agentui mcp login NAME` opens a browser. Everywhere else (the TUI,
  `run`, an editor) a server that needs a sign-in fails to start with one line naming that
  command — a window never pops up in the middle of a task.
- the loopback redirect: a one-shot listener on 127.0.0.1 at a free port receives the browser's
  redirect, answers it with a short page, and hands the code to the SDK.
- an access token's expiry survives a restart, so a stored refresh token is used before the
  server has to refuse the old token.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import time
import webbrowser
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import platformdirs

CALLBACK_PATH = "/callback"
LOGIN_TIMEOUT_S = 300.0


def credentials_path() -> Path:
    """`AGENTUI_MCP_CREDENTIALS`, else `mcp-oauth/credentials.json` in the user config dir."""
    env = os.environ.get("AGENTUI_MCP_CREDENTIALS")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir("agentui", appauthor=False)) / "mcp-oauth" / "credentials.json"


class SignInNeeded(Exception):
    """The server asks for an OAuth sign-in and nobody is there to do it (not `mcp login`)."""


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)


class CredentialStore:
    """The SDK's `TokenStorage` for one server URL, in the shared credentials file."""

    def __init__(self, url: str, path: Path | None = None, *, clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self.path = path or credentials_path()
        self.clock = clock

    def entry(self) -> dict[str, Any]:
        got = _read(self.path).get(self.url)
        return got if isinstance(got, dict) else {}

    def _update(self, **values: Any) -> None:
        with _locked(self.path):
            data = _read(self.path)
            entry = data.get(self.url) if isinstance(data.get(self.url), dict) else {}
            entry.update(values)
            data[self.url] = {k: v for k, v in entry.items() if v is not None}
            _write(self.path, data)

    def forget(self) -> bool:
        """Drop this server's tokens and client registration; whether there were any."""
        if not self.path.exists():
            return False
        with _locked(self.path):
            data = _read(self.path)
            had = data.pop(self.url, None) is not None
            if had:
                _write(self.path, data)
        return had

    def expires_at(self) -> float | None:
        value = self.entry().get("expires_at")
        return float(value) if isinstance(value, (int, float)) else None

    def signed_in(self) -> bool:
        return bool(self.entry().get("tokens"))

    # -- the SDK's TokenStorage protocol --
    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        raw = self.entry().get("tokens")
        with contextlib.suppress(ValueError, TypeError):
            return OAuthToken.model_validate(raw) if raw else None
        return None

    async def set_tokens(self, tokens: Any) -> None:
        expires = self.clock() + tokens.expires_in if tokens.expires_in else None
        self._update(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        raw = self.entry().get("client")
        with contextlib.suppress(ValueError, TypeError):
            return OAuthClientInformationFull.model_validate(raw) if raw else None
        return None

    async def set_client_info(self, client_info: Any) -> None:
        self._update(client=client_info.model_dump(mode="json", exclude_none=True))


class _Callback(asyncio.Protocol):
    """One HTTP request on the loopback listener: GET /callback?code=…&state=…"""

    def __init__(self, got: asyncio.Future[dict[str, str]]) -> None:
        self.got = got
        self.buf = b""
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if b"\r\n" not in self.buf:
            if len(self.buf) > 16_384:
                self.transport.close()
            return
        line = self.buf.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        target = urlparse(parts[1]) if len(parts) >= 2 and parts[0] == "GET" else None
        if target is None or target.path != CALLBACK_PATH:
            self._reply(404, "Not the sign-in callback.")
            return
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        if "error" in query:
            self._reply(200, f"Sign-in refused: {query['error']}. You can close this tab.")
        elif "code" in query:
            self._reply(200, "Signed in to the MCP server. You can close this tab and go back to agentui.")
        else:
            self._reply(400, "The redirect carried neither a code nor an error.")
            return
        if not self.got.done():
            self.got.set_result(query)

    def _reply(self, status: int, text: str) -> None:
        body = (f"<!doctype html><meta charset=utf-8><title>agentui</title><p>{text}</p>").encode()
        head = (f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\nContent-Type: text/html; "
                f"charset=utf-8\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        self.transport.write(head + body)
        self.transport.close()


class LoopbackLogin:
    """The person's side of a sign-in: the browser is sent to the authorization URL, and its
    redirect to `http://127.0.0.1:<port>/callback` is caught here. `say` gets every line meant for
    the person (the URL is always shown, in case no browser opens)."""

    def __init__(self, say: Callable[[str], None], *, open_browser: bool = True,
                 timeout_s: float = LOGIN_TIMEOUT_S) -> None:
        self.say = say
        self.open_browser = open_browser
        self.timeout_s = timeout_s
        self.port = 0
        self._server: asyncio.AbstractServer | None = None
        self._got: asyncio.Future[dict[str, str]] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def __aenter__(self) -> LoopbackLogin:
        loop = asyncio.get_running_loop()
        self._got = loop.create_future()
        got = self._got
        self._server = await loop.create_server(lambda: _Callback(got), "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()

    async def redirect(self, url: str) -> None:
        self.say(f"Open this address to sign in (waiting up to {self.timeout_s:g} s):\n  {url}")
        if self.open_browser:
            opened = False
            with contextlib.suppress(Exception):
                opened = await asyncio.to_thread(webbrowser.open, url)
            if not opened:
                self.say("No browser could be opened here: open the address yourself.")

    async def callback(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        assert self._got is not None
        try:
            query = await asyncio.wait_for(asyncio.shield(self._got), self.timeout_s)
        except TimeoutError:
            raise SignInNeeded(f"OAuth sign-in: no answer from the browser within {self.timeout_s:g} s") from None
        if "error" in query:
            said = query.get("error_description", "")[:200]
            why = query["error"][:100] + (f" ({said})" if said else "")
            raise SignInNeeded(f"OAuth sign-in refused by the authorization server: {why}")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


def provider(name: str, url: str, *, login: LoopbackLogin | None = None, store: CredentialStore | None = None) -> Any:
    """The SDK's OAuth `httpx.Auth` for one server. Without `login`, a server that asks for a sign-in
    raises SignInNeeded (the connection then fails naming `agentui mcp login NAME`)."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    from agentui import __version__

    store = store or CredentialStore(url)

    redirect_uri = login.redirect_uri if login is not None else "http://127.0.0.1/callback"
    metadata = OAuthClientMetadata(
        client_name="agentui", software_id="agentui", software_version=__version__,
        redirect_uris=[redirect_uri],  # type: ignore[list-item]  # pydantic parses the str
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none",
    )
    auth = OAuthClientProvider(url, metadata, store)
    if login is not None:
        auth.context.redirect_handler, auth.context.callback_handler = login.redirect, login.callback
    else:
        unattended(auth, name)
    # the SDK keeps a loaded token's expiry only in memory: give it the stored one, so an expired
    # token is refreshed before use instead of being refused first
    auth.context.token_expiry_time = store.expires_at()
    return auth


def unattended(auth: Any, name: str) -> None:
    """From now on a server that asks `auth` for a new sign-in fails naming `agentui mcp login NAME`."""

    async def no_person(*_args: Any) -> Any:
        raise SignInNeeded(f"it asks for an OAuth sign-in: run `agentui mcp login {name}`")

    auth.context.redirect_handler = auth.context.callback_handler = no_person
