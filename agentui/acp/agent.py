"""The ACP agent: each ACP session is a Runtime in the session's cwd; a prompt turn is a task.

Safety confirmations become `session/request_permission` (allow once → approve, allow always →
always for this task, reject once → deny, reject always → deny and never ask again in this session);
R1's clarifying question ends the turn as the agent's message and the next prompt is its answer;
`session/cancel` cancels the task like Esc in the TUI. Nothing is printed on stdout but protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp import helpers as h
from acp.schema import (
    AgentCapabilities,
    AvailableCommandsUpdate,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    ToolCallUpdate,
)

from agentui import __version__
from agentui.acp.context import Models, discover
from agentui.acp.elicit import ask_editor, editor_shows_forms
from agentui.acp.host import AcpHost
from agentui.acp.mapping import message_text
from agentui.acp.modes import (
    ASK,
    MODE_IDS,
    TIERS,
    attach_resources,
    audit_text,
    commands,
    config_options,
    help_text,
    mcp_prompts,
    mcp_text,
    memory_text,
    mode_state,
    parse_command,
    preset_answer,
    prompt_call,
    remember_text,
    resources_text,
    tree_text,
    usage_text,
)
from agentui.acp.permission import ask_permission
from agentui.acp.sessions import SessionRecord, SessionStore
from agentui.acp.stream import Stream
from agentui.clock import iso
from agentui.config import Config, McpServerConfig
from agentui.contracts import ClarificationRequest, ConfirmationChoice, ConfirmationRequest
from agentui.paths import DataLayout
from agentui.tools.answers import Answer
from agentui.tools.safety import sanitize

ANNOUNCE_DELAY_S = 0.1
FORGET_OPTIONS = [PermissionOption(option_id="forget", name="Delete it", kind="allow_once"),
                  PermissionOption(option_id="keep", name="Keep it", kind="reject_once")]


class _SharedMemory:
    """One memory store for every session's Runtime; a Runtime stopping must not close it."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def close(self) -> None:
        return None


@dataclass
class Session:
    record: SessionRecord
    runtime: Any = None
    error: str = ""  # why this session cannot run tasks (e.g. no LLM configured)
    notices: list[str] = field(default_factory=list)  # told once, at the next prompt
    stream: Stream | None = None
    active: str | None = None
    answer: asyncio.Future[str] | None = None
    turn: asyncio.Queue[tuple[str, str, str]] = field(default_factory=asyncio.Queue)
    denied_always: set[tuple[str, str]] = field(default_factory=set)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    mode: str = ASK  # the approval preset (modes.py)
    models: dict[str, str] = field(default_factory=dict)  # tier → model chosen by the editor
    stale: bool = False  # a config option changed: the runtime is rebuilt before the next task
    mcp_servers: list[Any] | None = None  # the editor's MCP servers, kept for a rebuild
    mcp_ready: asyncio.Future[None] | None = None  # the MCP servers starting in the background

    @property
    def id(self) -> str:
        return self.record.session_id


def prompt_text(blocks: list[Any]) -> str:
    parts: list[str] = []
    for b in blocks:
        kind = getattr(b, "type", "")
        if kind == "text":
            parts.append(b.text)
        elif kind == "resource_link":
            parts.append(f"[file {b.uri}]")
        elif kind == "resource":
            text = getattr(b.resource, "text", None)
            parts.append(f"[{b.resource.uri}]\n{text}" if text is not None else f"[{b.resource.uri}]")
    return "\n".join(p for p in parts if p).strip()


class AgentuiAcpAgent:
    def __init__(self, config: Config, *, clock: Any = None, ids: Any = None) -> None:
        from agentui.clock import SystemClock
        from agentui.ids import UuidIds

        self.config = config
        self.layout = DataLayout(config.data_path())
        self.store = SessionStore(self.layout)
        self.clock = clock or SystemClock()
        self.ids = ids or UuidIds()
        self.sessions: dict[str, Session] = {}
        self.conn: Any = None
        self._memory: Any = None
        self._models: Models | None = None  # what the endpoints list, found once (context.py)
        self._background: set[asyncio.Future[Any]] = set()
        self.client_caps: Any = None  # what the client offers: fs/*, terminal/*

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # -- lifecycle ------------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **_: Any) -> InitializeResponse:
        self.client_caps = client_capabilities
        # the one version agentui speaks, whatever the client asked: a client that cannot speak it
        # closes the connection (ACP's version negotiation)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True, prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities(),
                                                         resume=SessionResumeCapabilities(),
                                                         close=SessionCloseCapabilities())),
            agent_info=Implementation(name="agentui", title="agentui", version=__version__))

    async def authenticate(self, method_id: str, **_: Any) -> None:
        # `initialize` offers no auth methods, so every method id is unknown
        raise RequestError.invalid_params(
            {"methodId": method_id, "reason": "unknown auth method (agentui offers none)"}
        )

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any) -> NewSessionResponse:
        now = iso(self.clock.now())
        rec = SessionRecord(session_id=self.ids.new("session"), cwd=self._cwd(cwd), created_at=now, updated_at=now)
        s = await self._open(rec, mcp_servers)
        self.store.save(rec)
        self._announce(s)
        return NewSessionResponse(session_id=rec.session_id, modes=mode_state(s.mode),
                                  config_options=self._options(s))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **_: Any) -> LoadSessionResponse:
        rec = self.store.get(session_id)
        if rec is None:
            raise RequestError.resource_not_found(f"session {session_id}")
        rec.cwd = self._cwd(cwd or rec.cwd)
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await self._close(old)
        s = await self._open(rec, mcp_servers)
        from agentui.acp.mapping import Mapper

        replay = Mapper(memory=getattr(s.runtime, "memory", None))
        for env in self.store.replay(rec):  # the history, as it streamed the first time
            for update in replay.updates(env, replay=True):
                await self._send(s, update)
        self._announce(s)
        return LoadSessionResponse(modes=mode_state(s.mode), config_options=self._options(s))

    async def resume_session(self, session_id: str, cwd: str, mcp_servers: list[Any] | None = None,
                             **_: Any) -> ResumeSessionResponse:
        """Like load, without replaying the history (the client still shows it); an open session
        is kept as it is, its task included."""
        rec = self.store.get(session_id)
        if rec is None:
            raise RequestError.resource_not_found(f"session {session_id}")
        if session_id not in self.sessions:
            rec.cwd = self._cwd(cwd or rec.cwd)
            await self._open(rec, mcp_servers)
        s = self.sessions[session_id]
        self._announce(s)
        return ResumeSessionResponse(modes=mode_state(s.mode), config_options=self._options(s))

    async def close_session(self, session_id: str, **_: Any) -> CloseSessionResponse:
        s = self.sessions.pop(session_id, None)
        if s is not None:
            if s.answer is not None and not s.answer.done():
                s.answer.set_result("")
            if s.active and s.runtime is not None:
                await s.runtime.cancel(s.active, "the client closed the session (session/close)")
            await self._close(s)
        return CloseSessionResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **_: Any) -> ListSessionsResponse:
        recs = self.store.list(cwd)
        start = int(cursor) if cursor and cursor.isdigit() else 0
        page = recs[start:start + 100]
        nxt = str(start + 100) if start + 100 < len(recs) else None
        return ListSessionsResponse(next_cursor=nxt, sessions=[
            SessionInfo(session_id=r.session_id, cwd=r.cwd or str(Path.cwd()), title=r.title or None,
                        updated_at=r.updated_at or None) for r in page])

    def _session(self, session_id: str) -> Session:
        s = self.sessions.get(session_id)
        if s is None:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "unknown session; load it first"})
        return s

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        s = self._session(session_id)
        if mode_id not in MODE_IDS:
            raise RequestError.invalid_params({"modeId": mode_id, "reason": f"unknown mode; one of {sorted(MODE_IDS)}"})
        s.mode = mode_id
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **_: Any) -> SetSessionConfigOptionResponse:
        s = self._session(session_id)
        tier = config_id.removesuffix("_model")
        if config_id != f"{tier}_model" or tier not in TIERS:
            raise RequestError.invalid_params({"configId": config_id, "reason": "unknown config option"})
        offered = {o.value for opt in self._options(s) if opt.id == config_id for o in opt.options}
        if not isinstance(value, str) or value not in offered:
            raise RequestError.invalid_params({"configId": config_id, "value": value,
                                               "reason": "not one of the option's values"})
        if s.models.get(tier, self._model(tier)) != value:
            s.models[tier] = value
            s.stale = True  # the runtime is rebuilt with this model before the next task
        return SetSessionConfigOptionResponse(config_options=self._options(s))

    def _model(self, tier: str) -> str:
        return self.config.endpoint(tier).model or ""

    def _options(self, s: Session) -> list[Any]:
        listed = self._models.listed if self._models is not None else []
        return list(config_options({t: s.models.get(t, self._model(t)) for t in TIERS}, listed))

    def _announce(self, s: Session) -> None:
        """After a session is set up: the commands it takes and its title, once the client has its id."""
        async def later() -> None:
            # sent just after the session/new (load, resume) answer, which the SDK writes once this
            # handler has returned: a client may drop updates for a session id it does not know yet
            await asyncio.sleep(ANNOUNCE_DELAY_S)
            await self._send(s, AvailableCommandsUpdate(session_update="available_commands_update",
                                                        available_commands=commands(
                                                            mcp_prompts(getattr(s.runtime, "mcp", None)))))
            if s.record.title:
                await self._send(s, self._info(s))

        self._background.add(t := asyncio.ensure_future(later()))
        t.add_done_callback(self._background.discard)

    def _info(self, s: Session) -> Any:
        return SessionInfoUpdate(session_update="session_info_update", title=s.record.title or None,
                                 updated_at=s.record.updated_at or None)

    async def aclose(self) -> None:
        for s in list(self.sessions.values()):
            await self._close(s)
        self.sessions.clear()
        if self._memory is not None:
            with contextlib.suppress(Exception):
                await self._memory.close()

    # -- a prompt turn is a task ----------------------------------------------------------------
    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        s = self.sessions.get(session_id)
        if s is None:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "unknown session; load it first"})
        async with s.lock:
            text = prompt_text(prompt)
            if s.stale and not s.active:  # a model changed: the next task runs on it
                s = await self._rebuild(s)
            for note in s.notices:
                await self._send(s, message_text(f"warning: {note}\n"))
            s.notices.clear()
            command = parse_command(text) if not (s.answer is not None and not s.answer.done()) else None
            if command is not None:
                await self._send(s, message_text(await self._command(s, *command)))
                return PromptResponse(stop_reason="end_turn")
            if s.mcp_ready is not None and not s.mcp_ready.done():  # a task needs the servers' tools
                await self._send(s, message_text("Waiting for the MCP servers to start…\n"))
                with contextlib.suppress(Exception):
                    await s.mcp_ready
            for note in s.notices:  # e.g. a server that failed to start
                await self._send(s, message_text(f"warning: {note}\n"))
            s.notices.clear()
            said = text
            if not s.error and text:
                text = await self._mcp_text(s, text)
                if text is None:  # an MCP prompt that could not be got: said why
                    return PromptResponse(stop_reason="end_turn")
            if s.error or not text:
                await self._send(s, message_text(s.error or "Type a goal in plain language."))
                return PromptResponse(stop_reason="end_turn")
            rt = s.runtime
            if s.answer is not None and not s.answer.done() and s.active:
                tid = s.active  # this prompt answers R1's question; the task goes on
                s.answer.set_result(text)
            else:
                tid = await rt.submit(text)
                s.active = tid
                s.record.task_ids.append(tid)
                s.record.title = s.record.title or " ".join(said.split())[:200]
            s.record.updated_at = iso(self.clock.now())
            self.store.save(s.record)
            await self._send(s, self._info(s))
            stop = await self._turn(s, tid)
            tokens = s.stream.mapper.tokens.get(tid) if s.stream else None
            return PromptResponse(stop_reason=stop, usage=tokens.usage() if tokens else None)

    async def _turn(self, s: Session, tid: str) -> str:
        """Stream the task until it ends (its stop reason) or R1 asks a question (the turn ends)."""
        ended = asyncio.ensure_future(s.runtime.wait(tid))
        forwarded = False  # the forwarder has sent the task's terminal update
        try:
            while not (ended.done() and forwarded):
                event = asyncio.ensure_future(s.turn.get())
                waiting = {event} if ended.done() else {ended, event}
                done, _ = await asyncio.wait(waiting, timeout=2.0 if ended.done() else None,
                                             return_when=asyncio.FIRST_COMPLETED)
                if event not in done:
                    event.cancel()
                    if ended.done() and not done:
                        break  # the terminal update never came (a dropped task): end anyway
                    continue
                kind, etid, value = event.result()
                if etid != tid:
                    continue
                if kind == "question":
                    await self._send(s, message_text(value))
                    return "end_turn"  # the next prompt is the answer
                forwarded = True
            end = await ended
            s.active = None
            if getattr(end, "infra", None):  # the LLM endpoint failed: say so, plainly
                await self._send(s, message_text(end.infra.get("message") or end.reason))
                return "end_turn"
            if end.cancelled:
                return "cancelled"
            return s.stream.mapper.stop_reason(tid, end.final) if s.stream else "end_turn"
        finally:
            if not ended.done():
                ended.cancel()

    async def cancel(self, session_id: str, **_: Any) -> None:
        s = self.sessions.get(session_id)
        if s is None or s.runtime is None:
            return
        if s.answer is not None and not s.answer.done():
            s.answer.set_result("")
        if s.active:
            await s.runtime.cancel(s.active, "cancelled by the client (session/cancel)")

    def _ended(self, s: Session, task_id: str, stop: str) -> None:
        s.turn.put_nowait(("end", task_id, stop))

    # -- sessions -------------------------------------------------------------------------------
    def _cwd(self, cwd: str) -> str:
        path = Path(cwd or "")
        if not path.is_absolute():  # ACP: the session's working directory is an absolute path
            raise RequestError.invalid_params({"cwd": cwd, "reason": "must be an absolute path"})
        if not path.is_dir():
            raise RequestError.invalid_params({"cwd": cwd, "reason": "not a directory"})
        return str(path.resolve())

    def _texts(self, rec: SessionRecord) -> list[str]:
        return [e.payload.text for e in self.store.replay(rec) if e.type == "TaskStarted"]

    def _memory_store(self) -> Any:
        if self._memory is None:
            from agentui.memory import MemoryInUse, open_memory

            try:
                self._memory = open_memory(self.layout.memory_db, self.clock, self.ids)
            except MemoryInUse as e:
                print(f"agentui acp: {e}; this run uses a temporary memory", file=sys.stderr)
                self._memory = open_memory(None, self.clock, self.ids)
        return _SharedMemory(self._memory)

    def _session_config(self, mcp_servers: list[Any] | None, notices: list[str], cwd: str = "") -> Config:
        """The project's trusted servers (`.agentui/mcp.toml`) and the client's (ACP `mcpServers`)
        join the configured ones for this session (never replacing one: a clash of an editor's
        server gets a suffix); none of the editor's is allow-listed."""
        from agentui.mcp.projectfile import merged

        configured = merged(self.config.mcp.servers, cwd, self.layout.root, notices) if cwd else \
            self.config.mcp.servers
        extra: dict[str, McpServerConfig] = {}
        for srv in mcp_servers or []:
            name = "".join(c if c.isalnum() or c in "_-" else "_" for c in srv.name)[:32] or "client"
            while name in configured or name in extra:
                name += "-editor"
            if len(name) > 40:
                continue
            url = getattr(srv, "url", None)
            try:
                if url:
                    extra[name] = McpServerConfig(url=url, headers={x.name: x.value for x in (srv.headers or [])},
                                                  transport="sse" if getattr(srv, "type", "") == "sse"
                                                  else "streamable-http")
                elif getattr(srv, "command", None):
                    extra[name] = McpServerConfig(command=srv.command, args=list(srv.args or []),
                                                  env={e.name: e.value for e in (srv.env or [])})
            except ValueError as e:  # a bad header or entry: that server is left out, and said so
                notices.append(f"MCP server '{name}' from the editor is not used: {str(e).splitlines()[-1][:200]}")
                continue
            if name in extra:
                extra[name]._literal = True
        if not extra and configured is self.config.mcp.servers:
            return self.config
        servers = {**configured, **extra}
        return self.config.model_copy(update={"mcp": self.config.mcp.model_copy(update={"servers": servers})})

    async def _open(self, rec: SessionRecord, mcp_servers: list[Any] | None,
                    models: dict[str, str] | None = None) -> Session:
        from agentui.llm import LLMError, LLMPool
        from agentui.runtime import Runtime

        s = Session(record=rec, mcp_servers=mcp_servers)
        if self._models is None:
            self._models = await discover(self.config)
        self.sessions[rec.session_id] = s
        cfg = self._session_config(mcp_servers, s.notices, rec.cwd)
        chosen = {t: m for t, m in (models or {}).items() if m != self._model(t)}
        if chosen:
            s.models = dict(chosen)
            llm = cfg.llm.model_copy(update={t: getattr(cfg.llm, t).model_copy(update={"model": m})
                                             for t, m in chosen.items()})
            cfg = cfg.model_copy(update={"llm": llm})
        try:
            pool = LLMPool(cfg)
        except LLMError as e:
            s.error = f"agentui cannot run tasks: {e}"
            return s

        async def clarify(req: ClarificationRequest) -> str:
            fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            s.answer = fut
            s.turn.put_nowait(("question", req.task_id, req.question))
            try:
                return await fut
            finally:
                s.answer = None

        async def confirm(req: ConfirmationRequest) -> ConfirmationChoice | Answer:
            preset = preset_answer(s.mode, req, rec.cwd)  # the session's mode may answer it
            if preset is not None:
                return preset
            return await ask_permission(self.conn, s, req, cfg.acp.permission_timeout_s)

        from agentui.tools import default_registry

        tools = default_registry()
        rt = Runtime(cfg, workspace=rec.cwd, data_dir=self.layout.root, clock=self.clock, ids=self.ids,
                     pool=pool, memory=self._memory_store(), clarify=clarify, confirm=confirm, tools=tools)
        if cfg.mcp.servers:
            # the MCP servers start in the background: the session is ready at once, and the first
            # task waits for them (an `npx -y` server can take a minute); the runtime stops them
            from agentui.mcp import McpHub

            hub = McpHub(cfg.mcp.servers, cwd=rec.cwd)
            rt.mcp = hub
            s.mcp_ready = asyncio.ensure_future(self._attach(s, hub, tools))
        await rt.start()
        s.runtime = rt
        s.notices.extend(rt.problems)
        rt._history.extend(self._texts(rec))  # R1 sees the session's earlier turns as context

        async def send(update: Any) -> None:
            await self._send(s, update)

        host = AcpHost(self.conn, rec.session_id, self.client_caps, None, launcher_dir=self.layout.root / "run")
        s.stream = Stream(rt.bus.tap("acp"), send, lambda tid, stop: self._ended(s, tid, stop))
        s.stream.mapper.window = self._models.window
        s.stream.mapper.memory = rt.memory  # a plan's thought names the lessons it was made with
        for env in self.store.replay(rec):  # a reopened session's cost goes on from what it had cost
            if env.type == "LLMUsage":
                s.stream.mapper.count_cost(env.payload)
        if rt.mcp is not None:  # an MCP server's progress notifications, shown in its live tool call
            stream = s.stream

            def progress(call_id: str, line: str) -> None:
                if call_id in stream.started:  # a late notification never overwrites a call's result
                    stream.push(h.update_tool_call(call_id, status="in_progress", content=[
                        h.tool_content(h.text_block(sanitize(f"progress {line}")))]))

            rt.mcp.on_progress = progress

            def declined(line: str) -> None:  # on stderr (the agent's log) and as a thought in the editor
                print(f"agentui acp: {line}", file=sys.stderr, flush=True)
                stream.push(h.update_agent_thought_text(sanitize(line)))

            # a server's form goes to an editor that shows forms (ACP's elicitation); for any other it
            # is declined, and both the log and the editor say so
            rt.mcp.why_not_ask = "this editor does not show forms (it declares no ACP elicitation)"
            rt.mcp.on_log = declined
            if editor_shows_forms(self.client_caps):
                rt.mcp.ask = lambda req: ask_editor(self.conn, rec.session_id, req, cfg.acp.permission_timeout_s)
        host.stream = s.stream
        if rt.tools is not None:
            rt.tools.watchers.append(s.stream.watch)  # each tool call, live
            if host.any:  # fs/terminal through the editor, behind the same gate
                rt.tools.host = host
        s.stream.start(f"acp:{rec.session_id}")
        return s

    async def _attach(self, s: Session, hub: Any, tools: Any) -> None:
        try:
            s.notices.extend(await hub.attach(tools))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - a hub failure is a notice, never a dead session
            s.notices.append(f"MCP servers could not start: {e}")
        if mcp_prompts(hub):  # the servers' prompts join the commands
            await self._send(s, AvailableCommandsUpdate(session_update="available_commands_update",
                                                        available_commands=commands(mcp_prompts(hub))))

    async def _mcp_text(self, s: Session, text: str) -> str | None:
        """The prompt with MCP in it resolved: `/<server>.<prompt> args` becomes the prompt's text,
        and each `@<server>:<uri>` has the resource's text attached. None: a prompt failed (said)."""
        hub = getattr(s.runtime, "mcp", None)
        if hub is None:
            return text
        call = prompt_call(text, mcp_prompts(hub))
        if call is not None:
            (server, prompt), args = call
            if isinstance(args, str):  # which arguments are missing or unknown
                await self._send(s, message_text(args))
                return None
            try:
                text = await hub.connections[server].get_prompt(prompt.name, args)
            except Exception as e:  # noqa: BLE001 - said, and the turn ends
                await self._send(s, message_text(f"/{server}.{prompt.name}: {e}"))
                return None
        attached, problems = await attach_resources(text, hub.connections)
        for p in problems:
            await self._send(s, message_text(f"warning: {p}\n"))
        return attached

    async def _rebuild(self, s: Session) -> Session:
        """The session's runtime again, on the models the editor chose; mode and denials are kept."""
        self.sessions.pop(s.id, None)
        await self._close(s)
        new = await self._open(s.record, s.mcp_servers, s.models)
        new.mode, new.denied_always, new.lock = s.mode, s.denied_always, s.lock
        return new

    async def _command(self, s: Session, name: str, arg: str) -> str:
        if name == "mcp" and arg == "resources":
            return resources_text(getattr(s.runtime, "mcp", None))
        if name == "mcp":
            return mcp_text(s.runtime)
        if name == "memory":
            return await memory_text(self._memory_store(), arg)
        if name == "usage":
            return usage_text(s.stream.mapper.tokens if s.stream else {})
        if name == "audit":
            return audit_text(s.runtime)
        if name == "tree":
            return tree_text(s.record.cwd)
        if name == "remember":
            return remember_text(self._memory_store(), arg)
        if name == "forget":
            return await self._forget(s, arg)
        return help_text()

    async def _forget(self, s: Session, prefix: str) -> str:
        """`/forget ID`: the editor is asked first, as the TUI asks; no answer keeps the Megram."""
        if not prefix:
            return "/forget ID — the Megram's id or a prefix (/memory lists them)"
        memory = self._memory_store()
        try:
            m = memory.get(prefix)
        except Exception as e:  # noqa: BLE001 - not found, or a prefix of several: one line
            return f"/forget {prefix}: {e}"
        call = ToolCallUpdate(
            tool_call_id=f"forget-{m.id}", title=f"forget Megram {m.id}"[:200], kind="delete", status="pending",
            raw_input={"command": "forget", "id": m.id},
            content=[h.tool_content(h.text_block(f"Delete Megram {m.id} ({m.content[:200]})? This cannot be undone."))])
        try:
            resp = await self.conn.request_permission(session_id=s.id, tool_call=call, options=FORGET_OPTIONS)
        except Exception:  # noqa: BLE001 - no answer keeps the Megram
            return f"kept {m.id}"
        outcome = getattr(resp, "outcome", None)
        if getattr(outcome, "outcome", "") != "selected" or getattr(outcome, "option_id", None) != "forget":
            return f"kept {m.id}"
        try:
            gone = memory.forget(m.id)
        except Exception as e:  # noqa: BLE001 - said, never a crash
            return f"/forget {prefix}: {e}"
        return f"forgot {gone.id}"

    async def _send(self, s: Session, update: Any) -> None:
        with contextlib.suppress(Exception):  # a client that went away must not stop the task
            await self.conn.session_update(session_id=s.id, update=update)

    async def _close(self, s: Session) -> None:
        if s.mcp_ready is not None and not s.mcp_ready.done():
            s.mcp_ready.cancel()
            with contextlib.suppress(BaseException):
                await s.mcp_ready
        if s.runtime is not None:
            with contextlib.suppress(Exception):
                await s.runtime.stop()
        if s.stream is not None:
            await s.stream.stop()


async def serve(config: Config) -> None:
    from acp.stdio import stdio_streams

    from agentui.acp.wire import MAX_LINE, checked, quiet_logs

    quiet_logs()
    agent = AgentuiAcpAgent(config)
    reader, writer = await stdio_streams(limit=MAX_LINE)
    try:  # session/resume and session/close are "unstable" in SDK 0.12 (schema v1.19)
        await run_agent(agent, writer, await checked(reader, writer), use_unstable_protocol=True)
    finally:
        await agent.aclose()


def versions() -> tuple[str, int]:
    """(SDK version, protocol version) for `doctor`."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agent-client-protocol"), PROTOCOL_VERSION
    except PackageNotFoundError:
        return "?", PROTOCOL_VERSION
