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
import html
import json
import os
import secrets
import time
import webbrowser
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from agentui.paths import mcp_credentials_file as credentials_path
from agentui.tools.safety import one_line

CALLBACK_PATH = "/callback"
LOGIN_TIMEOUT_S = 300.0
EARLY_S = 30.0  # an access token this close to its expiry is refreshed first


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

    def refresh_at(self) -> float | None:
        """When to refresh: a little before the access token expires (a tenth of its life, at most
        EARLY_S), so it is not refused in flight."""
        until = self.expires_at()
        if until is None:
            return None
        tokens = self.entry().get("tokens")
        life = tokens.get("expires_in") if isinstance(tokens, dict) else None
        early = min(EARLY_S, 0.1 * life) if isinstance(life, (int, float)) and life > 0 else 0.0
        return until - early

    def _load(self, key: str, model: Any) -> Any:
        """The stored `key` as the SDK's pydantic `model`, or None (absent or damaged)."""
        raw = self.entry().get(key)
        with contextlib.suppress(ValueError, TypeError):
            return model.model_validate(raw) if raw else None
        return None

    # -- the SDK's TokenStorage protocol --
    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        return self._load("tokens", OAuthToken)

    async def set_tokens(self, tokens: Any) -> None:
        expires = self.clock() + tokens.expires_in if tokens.expires_in else None
        self._update(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        return self._load("client", OAuthClientInformationFull)

    async def set_client_info(self, client_info: Any) -> None:
        self._update(client=client_info.model_dump(mode="json", exclude_none=True))


class _Callback(asyncio.Protocol):
    """One HTTP request on the loopback listener: GET /callback?code=…&state=…. Only an answer that
    carries this sign-in's `state` counts; anything else is refused and the sign-in keeps waiting
    (a stranger who finds the port can neither end it nor pass a code of its own)."""

    def __init__(self, login: LoopbackLogin) -> None:
        self.login = login
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
        got = self.login.answer
        expected = self.login.state
        if got is None or got.done() or not expected:
            self._reply(400, "No sign-in is waiting for this answer.")
            return
        if not secrets.compare_digest(query.get("state", ""), expected):
            self._reply(400, "This answer does not belong to the sign-in agentui started (its state differs); "
                             "agentui keeps waiting for the right one.")
            self.login.refused += 1
            if self.login.refused <= 3:  # said, but a flood of them is not
                self.login.say("An answer that does not belong to this sign-in (its state differs) was refused; "
                               "still waiting.")
            return
        if "error" in query:
            self._reply(200, "The sign-in was refused. You can close this tab.")
        elif "code" in query:
            self._reply(200, "Signed in to the MCP server. You can close this tab and go back to agentui.")
        else:
            self._reply(400, "The answer carried neither a code nor an error.")
            return
        got.set_result(query)

    def _reply(self, status: int, text: str) -> None:
        body = f"<!doctype html><meta charset=utf-8><title>agentui</title><p>{html.escape(text)}</p>".encode()
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
        self.state = ""  # the `state` of the authorization request being answered
        self.answer: asyncio.Future[dict[str, str]] | None = None
        self.rounds = 0
        self.refused = 0  # answers that carried another state
        self._server: asyncio.AbstractServer | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def __aenter__(self) -> LoopbackLogin:
        self._server = await asyncio.get_running_loop().create_server(lambda: _Callback(self), "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()

    async def redirect(self, url: str) -> None:
        self.rounds += 1
        if self.rounds > 1:  # the server refused the token its own authorization server just issued
            raise SignInNeeded("OAuth sign-in: the server refused the token it had just issued; "
                               "nothing is kept (ask its operator, or try again later)")
        self.state = parse_qs(urlparse(url).query).get("state", [""])[0]
        self.answer = asyncio.get_running_loop().create_future()
        self.say(f"Open this address to sign in (waiting up to {self.timeout_s:g} s):\n  {one_line(url, 4000)}")
        if self.open_browser:
            opened = False
            with contextlib.suppress(Exception):
                opened = await asyncio.to_thread(webbrowser.open, url)
            if not opened:
                self.say("No browser could be opened here: open the address yourself.")

    async def callback(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        assert self.answer is not None
        try:
            query = await asyncio.wait_for(asyncio.shield(self.answer), self.timeout_s)
        except TimeoutError:
            raise SignInNeeded(f"OAuth sign-in: no answer from the browser within {self.timeout_s:g} s") from None
        if "error" in query:
            said = query.get("error_description", "")[:200]
            why = query["error"][:100] + (f" ({said})" if said else "")
            raise SignInNeeded(f"OAuth sign-in refused by the authorization server: {one_line(why, 320)}")
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
    # the SDK keeps a loaded token's expiry only in memory: give it the stored one (a little early),
    # so an expired token is refreshed before use instead of being refused first
    auth.context.token_expiry_time = store.refresh_at()
    return auth


class RefreshTurn:
    """One process at a time refreshes an expired sign-in: with a rotating refresh token, two
    processes refreshing at once would leave one holding a spent token. The others wait for their
    turn, then read the tokens it stored (no second refresh)."""

    def __init__(self, store: CredentialStore, timeout_s: float) -> None:
        self.store, self.timeout_s = store, timeout_s
        self._fd: int | None = None

    def due(self) -> bool:
        tokens = self.store.entry().get("tokens")
        when = self.store.refresh_at()
        return isinstance(tokens, dict) and bool(tokens.get("refresh_token")) and when is not None \
            and when <= self.store.clock()

    async def __aenter__(self) -> RefreshTurn:
        if not self.due():
            return self
        self.store.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(str(self.store.path) + ".refresh", os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:  # go on without the turn: at worst a sign-in is asked for
                    os.close(fd)
                    return self
                await asyncio.sleep(0.05)

    async def __aexit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing releases the lock
            self._fd = None


def unattended(auth: Any, name: str) -> None:
    """From now on a server that asks `auth` for a new sign-in fails naming `agentui mcp login NAME`."""

    async def no_person(*_args: Any) -> Any:
        raise SignInNeeded(f"it asks for an OAuth sign-in: run `agentui mcp login {name}`")

    auth.context.redirect_handler = auth.context.callback_handler = no_person
