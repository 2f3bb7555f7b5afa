"""`/login NAME` in the terminal UI (#40): a remote MCP server that asks for OAuth fails to start
naming the command; `/login docs` runs the sign-in in the browser (a stand-in as BROWSER, following
the redirect to the loopback callback) and the server's tools join the running session."""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path

from agentui.ui.status import StatusBar
from tests.mcpserver.process import ROOT, http_server
from tests.ui.test_app import SIZE, type_task, wait_for
from tests.ui.test_mcp_ui import make_app


async def test_login_from_the_input_signs_in_and_adds_the_tools(fakellm, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("BROWSER", f"{sys.executable} {ROOT / 'tests' / 'mcpserver' / 'browser.py'} %s")
    monkeypatch.setattr(webbrowser, "_tryorder", None)  # read BROWSER afresh (the stdlib caches its choice)
    marker = tmp_path / "marks"
    with http_server(tmp_path, "--oauth", "--marker", str(marker)) as base:
        app = make_app(fakellm, tmp_path, {"docs": {"url": base + "/mcp", "startup_timeout_s": 20}})
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.runtime is not None and app.runtime.mcp is not None)
            bar = app.query_one(StatusBar)
            await wait_for(pilot, lambda: "failed: docs" in bar.fields["mcp"], steps=600)
            assert any("agentui mcp login docs" in p for p in app.runtime.problems)
            await wait_for(pilot, lambda: any("type /login docs" in str(n.message) for n in app._notifications))
            assert bar.fields["problems"] == "⚠ 1 problem"
            assert "docs.echo" not in app.runtime.tools

            await type_task(pilot, "/login nope")
            await pilot.pause(0.1)
            assert app.current is None  # a command, never a goal

            await type_task(pilot, "/login docs")
            await wait_for(pilot, lambda: bar.fields["mcp"] == "MCP: 1/1 ready", steps=600)
            assert "docs.echo" in app.runtime.tools
            assert not any("'docs'" in p for p in app.runtime.problems) and bar.fields["problems"] == ""
            notes = [str(n.message) for n in app._notifications]
            assert any(f"{base}/authorize?" in n for n in notes)  # the address, in case no browser opens
            assert any("signed in to docs: 9 tools ready" in n for n in notes)
            assert any("/login NAME — no remote MCP server 'nope'; waiting for a sign-in: docs" in n for n in notes)
    assert marker.read_text().split()[:3] == ["oauth:register", "oauth:authorize", "oauth:token"]
