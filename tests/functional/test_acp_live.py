"""`agentui acp` (#18): tool calls stream live, one `tool_call` / `tool_call_update` pair per call;
the client's `fs/*` and `terminal/*` are used when advertised (behind the same gate); sessions
resume and close. The SDK's client side drives a real `agentui acp` process over the fake LLM."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from acp import text_block
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    FileSystemCapabilities,
    ReadTextFileResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.functional.test_acp import SLOW_EXIT, Client, agent, ws


def script(fake, *calls, summary: str = "done") -> None:  # noqa: ANN001
    fake.script("perceiver", [perceive("do it")])
    fake.script("planner", [plan(["it is done"], sub("do it", "it is done"))])
    fake.script("executor", [*calls, finish("done")])
    fake.script("agent_validator", [verdicts("pass")])
    fake.script("meta_validator", [merge("done", "pass", summary=summary)])


def tool_events(client: Client) -> list[tuple[str, str, str | None]]:
    return [(u.session_update, u.tool_call_id, u.status) for u in client.updates
            if u.session_update in ("tool_call", "tool_call_update") and u.status is not None]


class Editor(Client):
    """A client that offers fs/* (an in-memory buffer over the disk) and terminal/* (real processes)."""

    def __init__(self, answers: list[str] | None = None, *, buffers: dict[str, str] | None = None) -> None:
        super().__init__(answers)
        self.buffers = dict(buffers or {})  # path → unsaved text
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, tuple[asyncio.subprocess.Process, asyncio.Task]] = {}
        self.created: list[tuple[str, list[str], str | None]] = []
        self.envs: list[dict[str, str]] = []  # the environment each terminal was asked for

    async def read_text_file(self, session_id, path, line=None, limit=None, **_kw):  # noqa: ANN001, ANN201
        self.reads.append(path)
        text = self.buffers[path] if path in self.buffers else Path(path).read_text()
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id, path, content, **_kw):  # noqa: ANN001, ANN201
        self.writes.append((path, content))
        self.buffers[path] = content  # the editor's buffer; it saves when the user says so

    async def create_terminal(self, session_id, command, args=None, env=None, cwd=None,  # noqa: ANN001, ANN201
                              output_byte_limit=None, **_kw):
        self.created.append((command, list(args or []), cwd))
        self.envs.append({e.name: e.value for e in env or []})
        proc = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, **{e.name: e.value for e in env or []}})
        tid = f"term-{len(self.terminals) + 1}"
        self.terminals[tid] = (proc, asyncio.ensure_future(proc.stdout.read()))
        return CreateTerminalResponse(terminal_id=tid)

    async def wait_for_terminal_exit(self, session_id, terminal_id, **_kw):  # noqa: ANN001, ANN201
        proc, _out = self.terminals[terminal_id]
        return WaitForTerminalExitResponse(exit_code=await proc.wait())

    async def terminal_output(self, session_id, terminal_id, **_kw):  # noqa: ANN001, ANN201
        proc, out = self.terminals[terminal_id]
        text = (await out).decode() if proc.returncode is not None else ""
        return TerminalOutputResponse(output=text, truncated=False,
                                      exit_status=TerminalExitStatus(exit_code=proc.returncode))

    async def kill_terminal(self, session_id, terminal_id, **_kw):  # noqa: ANN001, ANN201
        proc, _ = self.terminals[terminal_id]
        if proc.returncode is None:
            proc.kill()

    async def release_terminal(self, session_id, terminal_id, **_kw):  # noqa: ANN001, ANN201
        return None


FS_AND_TERMINAL = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                                     terminal=True)


async def test_each_tool_call_is_shown_when_it_starts_and_updated_when_it_ends(fakellm, tmp_path):
    w = ws(tmp_path)
    # the first command waits for a file the client writes when it sees the call start: batched at
    # the end (the old behaviour), the call would time out and fail
    script(fakellm, call("shell", command="while [ ! -f go ]; do sleep 0.05; done; cat go"),
           call("shell", command="wc -c go"))

    class Starter(Client):
        async def session_update(self, session_id, update, **kw):  # noqa: ANN001, ANN201
            await super().session_update(session_id, update, **kw)
            if update.session_update == "tool_call" and "while" in update.title:
                (w / "go").write_text("went\n")

    client = Starter(answers=["approve"] * 4)
    async with agent(fakellm, tmp_path, client, tools={"timeout_s": 8}) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("do it")]), 60)
    assert resp.stop_reason == "end_turn"
    events = tool_events(client)
    assert len(events) == 4, events
    (k1, c1, s1), (k2, c1b, s2), (k3, c2, s3), (k4, c2b, s4) = events
    assert (k1, k2, k3, k4) == ("tool_call", "tool_call_update", "tool_call", "tool_call_update")
    assert c1 == c1b != c2 == c2b
    assert (s1, s2, s3, s4) == ("in_progress", "completed", "in_progress", "completed")
    first = [u for u in client.of("tool_call_update") if u.tool_call_id == c1][0]
    assert first.content[0].content.text.strip() == "went"


async def test_a_file_write_ends_with_a_diff_of_the_old_and_new_text(fakellm, tmp_path):
    w = ws(tmp_path)
    (w / "notes.txt").write_text("old line\n")
    script(fakellm, call("write_file", path="notes.txt", content="new line\n"))
    client = Client(answers=["approve"])  # overwriting an existing file asks
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("do it")]), 60)
    assert (w / "notes.txt").read_text() == "new line\n"
    [start] = client.of("tool_call")
    assert start.kind == "edit" and start.locations[0].path == str(w / "notes.txt")
    [end] = [u for u in client.of("tool_call_update") if u.status]
    [diff] = end.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == (
        "diff", str(w / "notes.txt"), "old line\n", "new line\n")


async def test_files_go_through_the_editor_when_it_offers_fs(fakellm, tmp_path):
    w = ws(tmp_path)
    (w / "a.txt").write_text("on disk\n")
    script(fakellm, call("read_file", path="a.txt"), call("write_file", path="b.txt", content="fresh\n"),
           call("write_file", path="a.txt", content="edited\n"), call("write_file", path="../out.txt", content="x"))
    editor = Editor(answers=["deny"], buffers={str(w / "a.txt"): "unsaved buffer\n"})
    async with agent(fakellm, tmp_path, editor, capabilities=FS_AND_TERMINAL) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("do it")]), 60)
    ends = [u for u in editor.of("tool_call_update") if u.status]
    assert ends[0].status == "completed" and ends[0].content[0].content.text == "unsaved buffer\n"
    assert str(w / "a.txt") in editor.reads
    # a new file: no question, written into the editor (not to disk by agentui)
    assert editor.writes == [(str(w / "b.txt"), "fresh\n")] and not (w / "b.txt").exists()
    assert ends[1].status == "completed" and ends[1].content[0].new_text == "fresh\n"
    # overwriting asks first (the gate); denied, so the editor was never asked to write
    [(perm, _)] = editor.permissions
    assert "a.txt" in perm.title and ends[2].status == "failed" and "denied by user" in ends[2].content[0].content.text
    # outside the workspace: refused by the gate before any I/O
    assert ends[3].status == "failed" and "refused" in ends[3].content[0].content.text
    assert not (tmp_path / "out.txt").exists() and len(editor.writes) == 1


async def test_shell_runs_in_the_editors_terminal_behind_the_gate(fakellm, tmp_path):
    w = ws(tmp_path)
    (w / "keep.txt").write_text("precious")
    script(fakellm, call("shell", command="echo hi from the terminal"), call("shell", command="rm keep.txt"))
    editor = Editor(answers=["deny"])
    async with agent(fakellm, tmp_path, editor, capabilities=FS_AND_TERMINAL) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("do it")]), 60)
    [(command, args, cwd)] = editor.created  # the denied `rm` never reached the terminal
    # the terminal's title is the command: agentui's launcher runs the whole argv handed over in its
    # environment — `env -i` with only the scrubbed variables (nothing of the client's environment,
    # BASH_ENV, keys, reaches the command), the sandbox when there is one, then `bash -c` the command
    assert command == "agentui-run" and args == ["echo hi from the terminal"]
    argv = json.loads(editor.envs[0]["AGENTUI_RUN_ARGV"])
    assert argv[:2] == ["/usr/bin/env", "-i"] and argv[-2:] == ["-c", "echo hi from the terminal"]
    assert not any(a.startswith(("BASH_ENV=", "AGENTUI_")) for a in argv)
    assert cwd == str(w.resolve()) or cwd == str(w)
    assert (w / "keep.txt").read_text() == "precious"
    [(perm, _)] = editor.permissions
    assert "rm keep.txt" in perm.title
    updates = editor.of("tool_call_update")
    live = [u for u in updates if u.status is None]  # the terminal, shown while it runs
    assert live and live[0].content[0].terminal_id == "term-1"
    ends = [u for u in updates if u.status]
    assert ends[0].status == "completed" and ends[0].content[0].terminal_id == "term-1"
    assert ends[1].status == "failed"
    logs = list((tmp_path / "data" / "tasks").glob("*.jsonl"))
    assert any("hi from the terminal" in f.read_text() for f in logs)  # the task log has the output


async def test_without_fs_or_terminal_the_tools_run_locally(fakellm, tmp_path):
    w = ws(tmp_path)
    script(fakellm, call("write_file", path="b.txt", content="local\n"), call("shell", command="cat b.txt"))
    editor = Editor(answers=["approve"] * 3)
    async with agent(fakellm, tmp_path, editor) as conn:  # no capabilities advertised
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("do it")]), 60)
    assert (w / "b.txt").read_text() == "local\n"
    assert editor.writes == [] and editor.created == [] and editor.reads == []
    ends = [u for u in editor.of("tool_call_update") if u.status]
    assert [e.status for e in ends] == ["completed", "completed"] and ends[1].content[0].content.text == "local\n"


async def test_a_session_resumes_without_replay_and_closes(fakellm, tmp_path):
    w = ws(tmp_path)
    first = Client()
    async with agent(fakellm, tmp_path, first) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("hi")]), 60)
    later = Client()
    async with agent(fakellm, tmp_path, later) as conn:
        await conn.resume_session(cwd=str(w), session_id=s.session_id, mcp_servers=[])
        assert later.updates == []  # resume does not replay the history (load does)
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("hello")]), 60)
        assert resp.stop_reason == "end_turn" and later.texts("agent_message_chunk")
        await conn.close_session(session_id=s.session_id)
        try:
            await conn.prompt(session_id=s.session_id, prompt=[text_block("again")])
            raise AssertionError("a closed session must not take prompts")
        except Exception as e:  # noqa: BLE001 - the SDK's RequestError
            assert "unknown session" in str(e) or "Invalid params" in str(e)
        listed = await conn.list_sessions(cwd=str(w))
        assert [x.session_id for x in listed.sessions] == [s.session_id]


def test_the_agent_advertises_resume_and_close(tmp_path) -> None:
    async def main() -> None:
        from acp import PROTOCOL_VERSION, spawn_agent_process

        root = Path(__file__).resolve().parents[2]
        async with spawn_agent_process(Client(), sys.executable, "-m", "agentui.cli", "--data-dir",
                                       str(tmp_path / "d"), "acp", env={**os.environ, "PYTHONPATH": str(root)},
                                       cwd=str(root), transport_kwargs=SLOW_EXIT) as (conn, _p):
            init = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 30)
        caps = init.agent_capabilities.session_capabilities
        assert caps.resume is not None and caps.close is not None and caps.list is not None

    asyncio.run(main())


async def test_an_editor_that_fails_or_never_answers_is_a_bounded_failure_or_a_local_run(fakellm, tmp_path):
    w = ws(tmp_path)
    (w / "a.txt").write_text("on disk\n")
    script(fakellm, call("read_file", path="a.txt"), call("write_file", path="b.txt", content="x\n"),
           call("shell", command="echo ran here"), call("shell", command="echo never ends"))

    class Broken(Editor):
        async def read_text_file(self, session_id, path, **_kw):  # noqa: ANN001, ANN201
            raise RuntimeError("buffer unavailable")

        async def write_text_file(self, session_id, path, content, **_kw):  # noqa: ANN001, ANN201
            self.writes.append((path, content))
            await asyncio.Event().wait()  # never answers

        async def create_terminal(self, session_id, command, **kw):  # noqa: ANN001, ANN201
            if not self.created:
                self.created.append((command, [], None))
                raise RuntimeError("no terminals here")
            return await super().create_terminal(session_id, command, **kw)

        async def wait_for_terminal_exit(self, session_id, terminal_id, **_kw):  # noqa: ANN001, ANN201
            await asyncio.Event().wait()  # never answers

        async def kill_terminal(self, session_id, terminal_id, **kw):  # noqa: ANN001, ANN201
            self.killed.append(terminal_id)
            await super().kill_terminal(session_id, terminal_id, **kw)

    editor = Broken(answers=["approve"] * 4)
    editor.killed = []
    async with agent(fakellm, tmp_path, editor, capabilities=FS_AND_TERMINAL, tools={"timeout_s": 3}) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("do it")]), 90)
    assert resp.stop_reason == "end_turn"
    ends = [u for u in editor.of("tool_call_update") if u.status]
    assert [e.status for e in ends] == ["completed", "failed", "completed", "failed"]
    assert ends[0].content[0].content.text == "on disk\n"  # the editor failed: read here, after the gate
    assert "did not answer within 3 s" in ends[1].content[0].content.text and not (w / "b.txt").exists()
    assert ends[2].content[0].content.text.strip() == "ran here"  # no terminal: run here, after the gate
    assert "timed out" in ends[3].content[-1].content.text and editor.killed == ["term-1"]
