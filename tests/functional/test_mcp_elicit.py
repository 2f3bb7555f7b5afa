"""MCP elicitation with real server processes: the SDK's server on the current protocol (the form
rides its tool call's input-required rounds) and a hand-written server of protocol 2025-11-25
(a server-to-client `elicitation/create` mid-call). agentui declares the capability, answers with
the front end's form, declines where nothing can ask (`agentui run` without a terminal, an editor
without ACP elicitation) and says so, and passes the form on to an editor that shows forms."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from acp import text_block
from acp.schema import ClientCapabilities

from agentui.config import McpServerConfig
from agentui.mcp import McpHub
from agentui.mcp.client import McpCallTimeout
from agentui.mcp.elicit import Answer
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.functional.test_acp import Client, ws

ROOT = str(Path(__file__).resolve().parents[2])


def sdk_server(**kw) -> McpServerConfig:  # noqa: ANN003
    return McpServerConfig(command=sys.executable, args=["-m", "tests.mcpserver"], cwd=ROOT, **kw)


def raw_server(*extra: str) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=["-m", "tests.mcpserver.raw", "--elicit", *extra], cwd=ROOT)


async def test_a_form_is_answered_by_the_front_end_or_declined_with_a_line() -> None:
    hub = McpHub({"t": sdk_server()})
    lines: list[str] = []
    hub.on_log = lines.append
    await asyncio.wait_for(hub.start(), 60)
    try:
        conn = hub.connections["t"]
        out = await conn.call("book", {}, 30)  # nobody to ask: declined, and said
        assert out.ok and out.text == "decline"
        assert lines == ["MCP server 't' asked for input (Book a table: who, how many, and where?); nothing here "
                         "can ask you: declined"]
        asked = []

        async def ask(req):  # noqa: ANN001, ANN202
            asked.append(req)
            return Answer("accept", {"name": "Ann", "guests": "4", "outside": "yes", "area": "bar"})

        hub.ask = ask
        out = await conn.call("book", {}, 30)
        assert out.text == 'accepted: {"name":"Ann","guests":4,"outside":true,"area":"bar"}'  # typed as the schema says
        [req] = asked
        assert [(f.name, f.kind, f.required) for f in req.fields] == [
            ("name", "string", True), ("guests", "integer", True), ("outside", "boolean", False),
            ("area", "enum", False)]
        assert req.fields[1].maximum == 12 and [v for v, _ in req.fields[3].options] == ["bar", "window", "garden"]

        async def bad(req):  # noqa: ANN001, ANN202 - a front end's answer that breaks the schema is not sent
            return Answer("accept", {"name": "Ann", "guests": "40"})

        hub.ask = bad
        assert (await conn.call("book", {}, 30)).text == "cancel"
        assert "does not fit its form" in lines[-1] and "at most 12" in lines[-1]
    finally:
        await hub.aclose()


async def test_a_server_of_the_previous_protocol_sees_the_capability_and_gets_its_answer(tmp_path) -> None:
    record = tmp_path / "rec.jsonl"
    hub = McpHub({"r": raw_server("--record", str(record))})
    lines: list[str] = []
    hub.on_log = lines.append

    async def ask(req):  # noqa: ANN001, ANN202
        return Answer("accept", {"version": "1.2.0", "count": "2.5", "draft": False, "channel": "Beta"})

    hub.ask = ask
    await asyncio.wait_for(hub.start(), 60)
    try:
        conn = hub.connections["r"]
        out = await conn.call("ask", {"text": ""}, 30)
        assert json.loads(out.text) == {"action": "accept", "content": {
            "version": "1.2.0", "count": 2.5, "draft": False, "channel": "beta"}}  # a choice's label → its value
        out = await conn.call("open_page", {"text": ""}, 30)
        assert json.loads(out.text) == {"action": "decline"}
        assert lines == ["MCP server 'r' asked you to open https://example.com/sign-in (Sign in); agentui opens no "
                         "page for a server: declined"]
    finally:
        await hub.aclose()
    sent = [json.loads(x) for x in record.read_text().splitlines()]
    [init] = [m for m in sent if m.get("method") == "initialize"]
    assert "form" in init["params"]["capabilities"]["elicitation"]


async def test_a_form_still_open_when_its_call_times_out_is_closed() -> None:
    hub = McpHub({"r": raw_server()})
    closed = asyncio.Event()

    async def never(req):  # noqa: ANN001, ANN202
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            closed.set()
            raise

    hub.ask = never
    await asyncio.wait_for(hub.start(), 60)
    try:
        try:
            await hub.connections["r"].call("ask", {"text": ""}, 1.5)
            raise AssertionError("the call times out")
        except McpCallTimeout:
            pass
        await asyncio.wait_for(closed.wait(), 5)
    finally:
        await hub.aclose()


def _script_book(fake) -> None:  # noqa: ANN001
    fake.script("perceiver", [perceive("book a table")])
    fake.script("planner", [plan(["a table is booked"], sub("book a table", "the booking answers", tools=["t.book"]))])
    fake.script("executor", [call("t.book"), finish("done")])
    fake.script("agent_validator", [verdicts("pass")])
    fake.script("meta_validator", [merge("done", "pass", summary="done")])


def test_agentui_run_without_a_terminal_declines_and_says_so(fakellm, tmp_path) -> None:
    _script_book(fakellm)
    (tmp_path / "ws").mkdir()
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"[mcp.servers.t]\ncommand = {json.dumps(sys.executable)}\nargs = ['-m', 'tests.mcpserver']\n"
                   f"cwd = {json.dumps(ROOT)}\nallow = ['book']\n")
    p = subprocess.run([sys.executable, "-m", "agentui.cli", "--config", str(cfg), "--data-dir", str(tmp_path / "d"),
                        "run", "--json", "--workspace", str(tmp_path / "ws"), "book a table"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT, stdin=subprocess.DEVNULL,
                       env={**os.environ, "PYTHONPATH": ROOT, "AGENTUI_BASE_URL": fakellm.base_url})
    assert "warning: MCP server 't' asked for input (Book a table: who, how many, and where?); `agentui run` has " \
           "no terminal to ask you on: declined" in p.stderr, p.stderr
    log = (tmp_path / "d" / "tasks" / f"{json.loads(p.stdout)['task_id']}.jsonl").read_text()
    [rec] = [json.loads(x) for x in log.splitlines() if json.loads(x)["kind"] == "tool"]
    assert rec["tool"] == "t.book" and rec["full_output"] == "decline"


class FormClient(Client):
    """An editor that shows forms: it answers each `elicitation/create` from a list."""

    def __init__(self, forms: list) -> None:
        super().__init__(answers=[])
        self.forms = list(forms)
        self.asked: list = []

    async def create_elicitation(self, message, mode, **_kw):  # noqa: ANN001, ANN201
        from acp.schema import AcceptElicitationResponse, DeclineElicitationResponse

        self.asked.append((message, mode))
        content = self.forms.pop(0)
        if content is None:
            return DeclineElicitationResponse(action="decline")
        return AcceptElicitationResponse(action="accept", content=content)


async def _book_in_acp(fake, tmp_path: Path, client: Client, capabilities=None) -> str:  # noqa: ANN001
    from acp import PROTOCOL_VERSION, spawn_agent_process

    from tests.functional.test_acp import SLOW_EXIT

    _script_book(fake)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[llm]\nbase_url = {json.dumps(fake.base_url)}\nmax_retries = 0\n"
                   "[pipeline]\ncorrection_budget = 0\n[ggs]\ntime_budget_ms = 1000000000\n"
                   f"[mcp.servers.t]\ncommand = {json.dumps(sys.executable)}\nargs = ['-m', 'tests.mcpserver']\n"
                   f"cwd = {json.dumps(ROOT)}\nallow = ['book']\n")
    # the client side of ACP's (unstable) elicitation is on only with the SDK's unstable protocol
    async with spawn_agent_process(client, sys.executable, "-m", "agentui.cli", "--config", str(cfg),
                                   "--data-dir", str(tmp_path / "data"), "acp", cwd=ROOT,
                                   env={**os.environ, "PYTHONPATH": ROOT}, transport_kwargs=SLOW_EXIT,
                                   use_unstable_protocol=True) as (conn, _proc):
        await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities),
                               30)
        s = await conn.new_session(cwd=str(ws(tmp_path)), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("book a table")]), 120)
    [done] = [u for u in client.of("tool_call_update") if u.status in ("completed", "failed")]
    return done.content[0].content.text


async def test_an_editor_without_forms_gets_a_decline_it_is_told_about(fakellm, tmp_path) -> None:
    client = Client()
    assert await _book_in_acp(fakellm, tmp_path, client) == "decline"
    assert any("MCP server 't' asked for input (Book a table: who, how many, and where?); this editor does not "
               "show forms (it declares no ACP elicitation): declined" in t
               for t in client.texts("agent_thought_chunk"))


async def test_an_editor_that_shows_forms_answers_the_server(fakellm, tmp_path) -> None:
    client = FormClient([{"name": "Bo", "guests": 2, "outside": False, "area": "window"}])
    caps = ClientCapabilities.model_validate({"elicitation": {"form": {}}})
    text = await _book_in_acp(fakellm, tmp_path, client, caps)
    assert text == 'accepted: {"name":"Bo","guests":2,"outside":false,"area":"window"}'
    [(message, mode)] = client.asked
    assert message == "MCP server 't' asks: Book a table: who, how many, and where?"
    schema = mode.requested_schema.model_dump(by_alias=True, exclude_none=True)
    assert schema["required"] == ["name", "guests"] and schema["properties"]["guests"]["maximum"] == 12


def test_agentui_run_on_a_terminal_asks_the_form_line_by_line(fakellm, tmp_path) -> None:
    import pty
    import threading

    _script_book(fakellm)
    (tmp_path / "ws").mkdir()
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"[mcp.servers.t]\ncommand = {json.dumps(sys.executable)}\nargs = ['-m', 'tests.mcpserver']\n"
                   f"cwd = {json.dumps(ROOT)}\nallow = ['book']\n")
    master, slave = pty.openpty()
    with open(tmp_path / "stderr.txt", "wb") as err:
        p = subprocess.Popen([sys.executable, "-m", "agentui.cli", "--config", str(cfg), "--data-dir",
                              str(tmp_path / "d"), "run", "--workspace", str(tmp_path / "ws"), "book a table"],
                             stdin=slave, stdout=slave, stderr=err, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": ROOT, "AGENTUI_BASE_URL": fakellm.base_url})
    os.close(slave)
    seen = bytearray()

    def drain() -> None:  # the terminal's output, read as it comes (a full pty would stall the child)
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    # typed ahead, as a person would answer each line: a name, 20 guests (too many), then 3, the
    # defaults for the yes/no and the choice, and send
    os.write(master, b"Ann\n20\n3\n\n\ny\n")
    try:
        p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
        os.close(master)
    said = (tmp_path / "stderr.txt").read_text() + seen.decode("utf-8", "replace")  # where input() put its prompts
    assert "MCP server 't' asks you (what you send goes to that server): Book a table" in said
    assert said.count("Guests (required) [integer]: ") == 2 and "at most 12" in said  # 20 was asked again
    assert "Area [bar / window / garden, empty = window]: " in said
    [log] = list((tmp_path / "d" / "tasks").glob("*.jsonl"))
    [rec] = [json.loads(x) for x in log.read_text().splitlines() if json.loads(x)["kind"] == "tool"]
    assert rec["full_output"] == 'accepted: {"name":"Ann","guests":3,"outside":false,"area":"window"}'
