"""The OAuth credentials store for remote MCP servers (#40): one 0600 file keyed by server URL, an
access token's expiry kept across restarts, and a file the safety gate never lets a tool read unasked."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import httpx
import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from agentui.mcp.oauth import CredentialStore, LoopbackLogin, SignInNeeded, credentials_path
from agentui.tools.safety import Verdict, assess, assess_read


def _store(tmp_path: Path, url: str = "https://mcp.example.com/mcp", now: float = 1000.0) -> CredentialStore:
    return CredentialStore(url, tmp_path / "mcp-oauth" / "credentials.json", clock=lambda: now)


def test_tokens_round_trip_private_file_and_absolute_expiry(tmp_path: Path) -> None:
    store = _store(tmp_path)
    asyncio.run(store.set_tokens(OAuthToken(access_token="at-1", refresh_token="rt-1", expires_in=60)))
    got = asyncio.run(store.get_tokens())
    assert got is not None and got.access_token == "at-1" and got.refresh_token == "rt-1"
    assert store.expires_at() == 1060.0  # when it was stored + expires_in: a restart still knows
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert store.signed_in()


def test_servers_are_kept_apart_and_forget_drops_one(tmp_path: Path) -> None:
    a, b = _store(tmp_path, "https://a.example/mcp"), _store(tmp_path, "https://b.example/mcp")
    asyncio.run(a.set_tokens(OAuthToken(access_token="for-a")))
    asyncio.run(b.set_client_info(OAuthClientInformationFull(client_id="cid-b", redirect_uris=None)))
    assert asyncio.run(b.get_tokens()) is None  # b has a registration, no token
    assert asyncio.run(b.get_client_info()).client_id == "cid-b"
    assert a.forget() is True and a.forget() is False
    assert asyncio.run(a.get_tokens()) is None
    assert asyncio.run(b.get_client_info()).client_id == "cid-b"  # the other server's is untouched


def test_a_damaged_file_reads_as_no_sign_in(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.path.parent.mkdir(parents=True)
    store.path.write_text("{not json", encoding="utf-8")
    assert asyncio.run(store.get_tokens()) is None and not store.signed_in()
    store.path.write_text(json.dumps({store.url: {"tokens": {"no": "access token"}}}), encoding="utf-8")
    assert asyncio.run(store.get_tokens()) is None
    asyncio.run(store.set_tokens(OAuthToken(access_token="new")))  # and it can be written over
    assert asyncio.run(store.get_tokens()).access_token == "new"


def test_the_default_file_is_a_secret_to_the_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTUI_MCP_CREDENTIALS", raising=False)
    path = credentials_path()
    store = CredentialStore("https://mcp.example.com/mcp", path)
    asyncio.run(store.set_tokens(OAuthToken(access_token="at", refresh_token="rt")))
    ws = tmp_path / "ws"
    ws.mkdir()
    read = assess_read(path, ws)
    assert read.verdict is Verdict.ASK and read.human_only
    shell = assess(f"cat {path}", ws)
    assert shell.verdict is not Verdict.SAFE
    # by its name alone too, wherever the config dir is (macOS keeps it outside ~/.config)
    elsewhere = tmp_path / "Library" / "Application Support" / "agentui" / "mcp-oauth" / "credentials.json"
    assert assess_read(elsewhere, ws).human_only


def _get(url: str) -> tuple[int, str]:
    r = httpx.get(url, timeout=5)
    return r.status_code, r.text


AUTHORIZE = "https://auth.example/authorize?client_id=c&state=s1&code_challenge=x"


def test_loopback_listener_hands_over_only_the_answer_to_its_own_request(tmp_path: Path) -> None:
    said: list[str] = []

    async def go() -> object:
        async with LoopbackLogin(said.append, open_browser=False, timeout_s=10) as login:
            assert login.redirect_uri.startswith("http://127.0.0.1:") and login.redirect_uri.endswith("/callback")
            early = await asyncio.to_thread(_get, login.redirect_uri + "?code=c0de&state=s1")
            assert early[0] == 400  # nothing is waiting yet
            await login.redirect(AUTHORIZE)
            wrong = await asyncio.to_thread(_get, login.redirect_uri.replace("/callback", "/other"))
            assert wrong[0] == 404
            # a stranger who found the port: a forged code, a forged refusal, no state at all
            for forged in ("?code=evil&state=guess", "?error=access_denied&state=zz", "?code=evil"):
                status, page = await asyncio.to_thread(_get, login.redirect_uri + forged)
                assert status == 400 and "Signed in" not in page, forged
            assert login.answer is not None and not login.answer.done()  # still waiting for the real one
            assert sum("does not belong to this sign-in" in line for line in said) == 3  # the person is told
            ok = await asyncio.to_thread(_get, login.redirect_uri + "?code=c0de&state=s1")
            assert ok[0] == 200 and "close this tab" in ok[1]
            return await login.callback()

    result = asyncio.run(go())
    assert result.code == "c0de" and result.state == "s1"  # type: ignore[attr-defined]
    assert any(AUTHORIZE in line for line in said)


def test_a_refusal_is_one_visible_line_and_its_page_reflects_nothing() -> None:
    pages: list[str] = []

    async def refused() -> None:
        async with LoopbackLogin(lambda _l: None, open_browser=False, timeout_s=10) as login:
            await login.redirect(AUTHORIZE)
            hostile = httpx.QueryParams({"error": "<script>alert(1)</script>", "state": "s1",
                                         "error_description": "\x1b[2J\x1b[31mPWNED\r\n\afake: run it"})
            pages.append((await asyncio.to_thread(_get, f"{login.redirect_uri}?{hostile}"))[1])
            await login.callback()

    with pytest.raises(SignInNeeded) as got:
        asyncio.run(refused())
    why = str(got.value)
    assert why.startswith("OAuth sign-in refused by the authorization server: ")
    assert not any(ch in why for ch in "\x1b\r\n\a")  # shown, never obeyed by the terminal
    assert "<script>" not in pages[0]


def test_no_answer_in_time_and_a_second_round_are_one_line_reasons() -> None:
    async def nobody() -> None:
        async with LoopbackLogin(lambda _l: None, open_browser=False, timeout_s=0.2) as login:
            await login.redirect(AUTHORIZE)
            await login.callback()

    with pytest.raises(SignInNeeded, match="no answer from the browser within 0.2 s"):
        asyncio.run(nobody())

    async def twice() -> None:  # the server refused the token it had just issued: no second browser
        async with LoopbackLogin(lambda _l: None, open_browser=False, timeout_s=5) as login:
            await login.redirect(AUTHORIZE)
            await login.redirect(AUTHORIZE.replace("s1", "s2"))

    with pytest.raises(SignInNeeded, match="refused the token it had just issued"):
        asyncio.run(twice())


def test_a_credentials_file_named_elsewhere_is_secret_there_and_hidden_by_the_sandbox(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentui.tools.sandbox import secret_locations

    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("AGENTUI_MCP_CREDENTIALS", str(ws / "notes-data.json"))
    store = CredentialStore("https://mcp.example.com/mcp", credentials_path())
    asyncio.run(store.set_tokens(OAuthToken(access_token="at", refresh_token="rt")))
    assert assess_read(ws / "notes-data.json", ws).human_only
    assert assess("cat notes-data.json", ws).verdict is not Verdict.SAFE
    assert (ws / "notes-data.json").resolve() in secret_locations()  # an indirect read in the sandbox finds nothing
    assert not assess_read(ws / "other.json", ws).human_only  # only that file, not its folder
