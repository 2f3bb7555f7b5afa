"""A real `agentui acp` process on the fake LLM: `usage_update` carries the session's cost only when
the endpoint reported one for every call (OpenRouter's `usage.cost`), and a command run in the
editor's terminal is titled with the command, not with the sandbox wrapper around it."""

from __future__ import annotations

import asyncio
import os

from acp import text_block

from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.functional.test_acp import Client, agent, ws
from tests.functional.test_acp_live import FS_AND_TERMINAL, Editor, script


def _script_echo(fake, costs: list[float | None]) -> None:  # noqa: ANN001
    replies = [perceive("say hi"), plan(["hi is shown"], sub("echo hi", "hi is printed", tools=["shell"])),
               call("shell", command="echo hi"), finish("hi"), verdicts("pass", quote="hi"),
               merge("hi", "pass", summary="said hi")]
    for reply, cost in zip(replies, [*costs, None], strict=True):
        reply.cost = cost
    fake.script("perceiver", replies[:1])
    fake.script("planner", replies[1:2])
    fake.script("executor", replies[2:4])
    fake.script("agent_validator", replies[4:5])
    fake.script("meta_validator", replies[5:])


async def _usage(fake, tmp_path, costs: list[float | None]) -> list:  # noqa: ANN001
    _script_echo(fake, costs)
    client = Client(answers=["approve"])
    async with agent(fake, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(ws(tmp_path)), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("say hi")]), 60)
    usage = client.of("usage_update")
    assert len(usage) == 5  # the one subtask's results are merged without a call
    return [(u.cost.amount, u.cost.currency) if u.cost is not None else None for u in usage]


async def test_usage_carries_the_sessions_cost_when_the_endpoint_reports_it(fakellm, tmp_path) -> None:
    costs = await _usage(fakellm, tmp_path, [0.001, 0.002, 0.0005, 0.0005, 0.001])
    # cumulative for the session, as ACP defines it; read from the usage chunk after the reply's value
    assert costs == [(0.001, "USD"), (0.003, "USD"), (0.0035, "USD"), (0.004, "USD"), (0.005, "USD")]


async def test_no_cost_is_shown_once_a_call_did_not_report_one(fakellm, tmp_path) -> None:
    costs = await _usage(fakellm, tmp_path, [0.001, None, 0.002, 0.001, 0.001])
    assert costs == [(0.001, "USD"), None, None, None, None]  # a partial sum would understate it


async def test_without_a_reported_cost_none_is_invented(fakellm, tmp_path) -> None:
    assert await _usage(fakellm, tmp_path, [None] * 5) == [None] * 5


async def test_an_editor_that_cannot_find_the_launcher_runs_nothing_and_agentui_runs_it_here(fakellm, tmp_path):
    class PathBlind(Editor):
        """Starts terminals from its own environment only (the PATH it was given is not used)."""

        async def create_terminal(self, session_id, command, args=None, env=None, cwd=None, **kw):  # noqa: ANN001, ANN201
            self.created.append((command, list(args or []), cwd))
            proc = await asyncio.create_subprocess_shell(
                " ".join([command, *(f"'{a}'" for a in args or [])]), cwd=cwd, env=dict(os.environ),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            tid = f"term-{len(self.terminals) + 1}"
            self.terminals[tid] = (proc, asyncio.ensure_future(proc.stdout.read()))
            from acp.schema import CreateTerminalResponse

            return CreateTerminalResponse(terminal_id=tid)

    w = ws(tmp_path)
    script(fakellm, call("shell", command="echo ran here"))
    editor = PathBlind(answers=["approve"])
    async with agent(fakellm, tmp_path, editor, capabilities=FS_AND_TERMINAL) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("do it")]), 60)
    assert editor.created == [("agentui-run", ["echo ran here"], str(w.resolve()))]
    [end] = [u for u in editor.of("tool_call_update") if u.status]
    assert end.status == "completed" and [c.type for c in end.content] == ["content"]  # not the editor's terminal
    assert end.content[0].content.text.strip() == "ran here"
