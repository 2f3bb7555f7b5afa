"""The test MCP server's OAuth mode (tests/mcpserver --http --oauth, #40), alone: a real server process
driven by the SDK's own OAuth client (`OAuthClientProvider`), with the browser stand-in
(tests/mcpserver/browser.py) opened through Python's `webbrowser` and BROWSER, as a client would."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import secrets
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import httpx
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.mcpserver.process import ROOT, http_server

BROWSER = f"{sys.executable} -m tests.mcpserver.browser %s"
# what a client does to show the user a page: webbrowser.open, which honours BROWSER
OPEN = "import sys, webbrowser; sys.exit(0 if webbrowser.open(sys.argv[1]) else 1)"


class Storage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Callback:
    """The client's redirect target: a one-shot HTTP listener at 127.0.0.1 that keeps the query."""

    def __init__(self) -> None:
        self.query: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self.server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> Callback:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/callback"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = (await reader.readuntil(b"\r\n\r\n")).decode()
        target = request.split(" ", 2)[1]
        if not self.query.done():
            self.query.set_result({k: v[0] for k, v in parse_qs(urlparse(target).query).items()})
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 7\r\n"
                     b"connection: close\r\n\r\nthanks\n")
        await writer.drain()
        writer.close()

    async def result(self) -> AuthorizationCodeResult:
        query = await asyncio.wait_for(self.query, 30)
        if "error" in query:
            raise PermissionError(f"authorization refused: {query['error']} (state {query.get('state')})")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


async def open_in_browser(url: str, log: Path) -> None:
    """A separate process calls webbrowser.open(url) with BROWSER naming the stand-in, which follows the
    /authorize redirect to our callback listener (served meanwhile by this event loop)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", OPEN, url, cwd=str(ROOT), stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "BROWSER": BROWSER, "AGENTUI_TEST_BROWSER_LOG": str(log)})
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()


def provider(base: str, storage: Storage, callback: Callback, log: Path) -> OAuthClientProvider:
    return OAuthClientProvider(
        f"{base}/mcp", OAuthClientMetadata(client_name="oauth-test", redirect_uris=[callback.url]), storage,
        redirect_handler=lambda url: open_in_browser(url, log), callback_handler=callback.result)


async def add(base: str, auth: OAuthClientProvider, a: int, b: int) -> tuple[list[str], str]:
    """Connect with `auth`, list the tools and call add(a, b)."""
    async with create_mcp_http_client(auth=auth) as http, \
            Client(streamable_http_client(f"{base}/mcp", http_client=http), read_timeout_seconds=60) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        result = await client.call_tool("add", {"a": a, "b": b})
        return tools, result.content[0].text  # type: ignore[union-attr]


def lines(marker: Path) -> list[str]:
    return marker.read_text().split() if marker.exists() else []


@pytest.fixture
async def callback() -> AsyncIterator[Callback]:
    async with Callback() as cb:
        yield cb


async def test_the_sdk_client_authorizes_through_the_browser_and_calls_a_tool(tmp_path, callback) -> None:
    marker, log = tmp_path / "marker", tmp_path / "browser.log"
    with http_server(tmp_path, "--oauth", "--marker", str(marker)) as base:
        storage = Storage()
        tools, text = await asyncio.wait_for(add(base, provider(base, storage, callback, log), 2, 40), 90)
        assert {"echo", "add"} <= set(tools) and text == "42"
        assert lines(marker) == ["oauth:register", "oauth:authorize", "oauth:token", "add"]
        [opened] = log.read_text().split()
        query = parse_qs(urlparse(opened).query)
        assert opened.startswith(f"{base}/authorize?") and query["code_challenge_method"] == ["S256"]
        assert query["resource"] == [base]
        assert storage.tokens is not None and storage.tokens.expires_in == 3600
        assert storage.tokens.refresh_token and storage.client is not None

        # a second connection with the stored token needs no browser, no new token
        tools, text = await asyncio.wait_for(add(base, provider(base, storage, callback, log), 1, 1), 60)
        assert text == "2" and lines(marker)[4:] == ["add"] and len(log.read_text().split()) == 1


async def test_an_expired_token_is_refused_so_the_client_refreshes(tmp_path, callback) -> None:
    marker, log = tmp_path / "marker", tmp_path / "browser.log"
    with http_server(tmp_path, "--oauth", "--token-ttl", "2", "--marker", str(marker)) as base:
        storage = Storage()
        auth = provider(base, storage, callback, log)
        assert (await asyncio.wait_for(add(base, auth, 2, 3), 90))[1] == "5"
        assert storage.tokens is not None and storage.tokens.expires_in == 2 and storage.client is not None
        old = storage.tokens
        async with httpx.AsyncClient(timeout=30) as http:
            assert (await initialize(http, base, old.access_token)).status_code == 200
            await asyncio.sleep(2.5)
            refused = await initialize(http, base, old.access_token)
            assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]
            assert lines(marker)[-1] == "oauth:reject"

            # the client sees its token has expired and refreshes it: no browser, no new code
            assert (await asyncio.wait_for(add(base, auth, 4, 5), 60))[1] == "9"
            assert storage.tokens.access_token != old.access_token
            assert storage.tokens.refresh_token not in (None, old.refresh_token)
            assert lines(marker).count("oauth:refresh") == 1 and lines(marker).count("oauth:authorize") == 1
            assert len(log.read_text().split()) == 1

            # the refresh token rotated: the old one is no good any more
            again = await http.post(f"{base}/token", data={
                "grant_type": "refresh_token", "refresh_token": old.refresh_token,
                "client_id": storage.client.client_id, "client_secret": storage.client.client_secret})
            assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


async def initialize(http: httpx.AsyncClient, base: str, token: str | None) -> httpx.Response:
    """One raw MCP `initialize` request, with `token` as the bearer token if given."""
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    return await http.post(f"{base}/mcp", headers=headers, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})


async def test_with_deny_the_user_refuses_and_the_flow_fails(tmp_path, callback) -> None:
    marker, log = tmp_path / "marker", tmp_path / "browser.log"
    with http_server(tmp_path, "--oauth", "--deny", "--marker", str(marker)) as base:
        storage = Storage()
        with pytest.raises(BaseException) as failed:  # noqa: PT011 - anyio wraps it in exception groups
            await asyncio.wait_for(add(base, provider(base, storage, callback, log), 2, 40), 90)
        assert "authorization refused: access_denied" in flatten(failed.value)
        query = callback.query.result()
        assert query["error"] == "access_denied" and query["state"]  # the client's state comes back
        assert lines(marker) == ["oauth:register", "oauth:authorize", "oauth:deny"]
        assert storage.tokens is None


def flatten(exc: BaseException) -> str:
    """Every message in an exception and the groups, causes and contexts under it."""
    parts, todo, seen = [], [exc], set()
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        parts.append(f"{type(e).__name__}: {e}")
        todo.extend(getattr(e, "exceptions", ()))
        todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    return "\n".join(parts)


async def test_unauthenticated_requests_get_401_naming_the_resource_metadata(tmp_path) -> None:
    marker = tmp_path / "marker"
    with http_server(tmp_path, "--oauth", "--marker", str(marker)) as base:
        async with httpx.AsyncClient(timeout=30) as http:
            bare = await initialize(http, base, None)
            assert bare.status_code == 401
            challenge = bare.headers["www-authenticate"]
            assert challenge.startswith("Bearer ")
            assert f'resource_metadata="{base}/.well-known/oauth-protected-resource"' in challenge
            assert lines(marker) == []  # no token, nothing to reject

            forged = await initialize(http, base, "not-a-token-this-server-issued")
            assert forged.status_code == 401 and lines(marker) == ["oauth:reject"]

            prm = (await http.get(f"{base}/.well-known/oauth-protected-resource")).json()
            assert prm["resource"] == base and prm["authorization_servers"] == [base]
            asm = (await http.get(f"{base}/.well-known/oauth-authorization-server")).json()
            assert asm["issuer"] == base and asm["code_challenge_methods_supported"] == ["S256"]
            assert (asm["authorization_endpoint"], asm["token_endpoint"], asm["registration_endpoint"]) == (
                f"{base}/authorize", f"{base}/token", f"{base}/register")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def register(http: httpx.AsyncClient, base: str, redirect: str) -> dict[str, str]:
    reply = await http.post(f"{base}/register", json={"redirect_uris": [redirect], "client_name": "raw"})
    assert reply.status_code == 201, reply.text
    return reply.json()


async def test_codes_need_the_pkce_verifier_and_are_good_once(tmp_path) -> None:
    redirect = f"http://127.0.0.1:{closed_port()}/callback"
    with http_server(tmp_path, "--oauth") as base:
        async with httpx.AsyncClient(timeout=30) as http:
            client = await register(http, base, redirect)
            verifier = secrets.token_urlsafe(48)
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            go = await http.get(f"{base}/authorize?" + urlencode({
                "response_type": "code", "client_id": client["client_id"], "redirect_uri": redirect,
                "state": "st4te", "code_challenge": challenge, "code_challenge_method": "S256"}))
            assert go.status_code == 302 and go.headers["location"].startswith(redirect + "?")
            back = {k: v[0] for k, v in parse_qs(urlparse(go.headers["location"]).query).items()}
            assert back["state"] == "st4te" and back["iss"] == base and back["code"]

            def exchange(code_verifier: str) -> dict[str, str]:
                return {"grant_type": "authorization_code", "code": back["code"], "redirect_uri": redirect,
                        "code_verifier": code_verifier, "client_id": client["client_id"],
                        "client_secret": client["client_secret"]}

            wrong = await http.post(f"{base}/token", data=exchange(secrets.token_urlsafe(48)))
            assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
            right = await http.post(f"{base}/token", data=exchange(verifier))
            assert right.status_code == 200 and right.json()["token_type"] == "Bearer"
            assert (await initialize(http, base, right.json()["access_token"])).status_code == 200
            reused = await http.post(f"{base}/token", data=exchange(verifier))
            assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"


def test_the_browser_stand_in_says_in_one_line_when_the_callback_refuses(tmp_path) -> None:
    redirect = f"http://127.0.0.1:{closed_port()}/callback"
    log = tmp_path / "browser.log"
    with http_server(tmp_path, "--oauth") as base:
        client = httpx.post(f"{base}/register", json={"redirect_uris": [redirect]}, timeout=30).json()
        url = f"{base}/authorize?" + urlencode({
            "response_type": "code", "client_id": client["client_id"], "redirect_uri": redirect, "state": "s",
            "code_challenge": "x" * 43, "code_challenge_method": "S256"})
        run = subprocess.run([sys.executable, "-c", OPEN, url], cwd=str(ROOT), capture_output=True, text=True,
                             timeout=60, env={**os.environ, "BROWSER": BROWSER, "AGENTUI_TEST_BROWSER_LOG": str(log)})
        assert run.returncode == 1  # webbrowser.open returned False: the browser exited 1
        [line] = run.stderr.splitlines()
        assert line.startswith(f"test browser: could not connect to {redirect}?")
        assert log.read_text() == url + "\n"

        # a page that answers, even with an error, is a page shown: exit 0, the status on stderr
        shown = subprocess.run([sys.executable, "-m", "tests.mcpserver.browser", f"{base}/authorize?client_id=x"],
                               cwd=str(ROOT), capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0 and shown.stderr.startswith("test browser: 400 Bad Request from ")
