"""MCP servers' tools in the tool registry.

`McpHub.attach(registry)` starts every enabled server concurrently (each bounded by its startup
timeout), registers its tools as `<server>.<tool>` with their JSON schemas, and reports each
server. A server that fails to start contributes no tools and one clear problem line; one that
dies later makes its calls fail as environmental failures and hides its tools from new plans.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any

from agentui.config import McpServerConfig
from agentui.contracts import ToolCallRecord
from agentui.mcp.annotations import Hints, decide
from agentui.tools.registry import BaseTool, ToolContext, gate
from agentui.tools.safety import SAFE, assess_call


@dataclass
class ServerReport:
    name: str
    ok: bool
    tools: list[str]
    latency_s: float
    detail: str
    warnings: list[str] = field(default_factory=list)  # one line per tool left out for its definition
    hints: dict[str, Hints] = field(default_factory=dict)  # tool → the server's annotations
    needs_sign_in: bool = False  # failed asking for an OAuth sign-in only a person can give


def normalise_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An MCP input schema as our tool `parameters`: an object; a property's list of types becomes
    the equivalent `anyOf` (our argument check reads `type` as one name)."""
    out = dict(schema or {})
    out.setdefault("type", "object")
    props = out.get("properties")
    if isinstance(props, dict):
        fixed = {}
        for key, prop in props.items():
            if isinstance(prop, dict) and isinstance(prop.get("type"), list):
                prop = {k: v for k, v in prop.items() if k != "type"}
                prop["anyOf"] = [{"type": t} for t in schema["properties"][key]["type"]]
            fixed[key] = prop
        out["properties"] = fixed
    return out


def progress_line(done: float, total: float | None, message: str | None) -> str:
    """"3/10 (30 %): copying" from a server's progress notification."""
    amount = f"{done:g}/{total:g} ({done / total:.0%})" if total else f"{done:g}"
    return f"{amount}: {' '.join(message.split())[:200]}" if message else amount


class McpTool(BaseTool):
    """One MCP server tool. A call asks first unless the server's `allow` lists it or its read-only
    hint is trusted; a destructive hint always asks (annotations.py)."""

    def __init__(self, conn: Any, tool: str, description: str, schema: dict[str, Any], *,
                 allowed: bool, timeout_s: float | None, hints: Hints | None = None,
                 trust_read_only: bool = False) -> None:
        self.conn = conn
        self.server = conn.name
        self.remote_name = tool
        self.name = f"{conn.name}.{tool}"
        self.description = f"[MCP {conn.name}] {description}".strip()
        self.parameters = normalise_schema(schema)
        self.hub: Any = None  # the McpHub that registered it (its progress listener)
        self.hints = hints or Hints()
        self.decision = decide(tool, conn.name, self.hints, allowed=allowed, trust_read_only=trust_read_only)
        self.allowed = not self.decision.ask
        self.timeout_s = timeout_s

    @property
    def available(self) -> bool:  # type: ignore[override]
        # a tool the server dropped from its list (after `tools/list_changed`) is no longer offered
        return bool(self.conn.alive) and self.conn.has_tool(self.remote_name)

    def target(self, args: dict[str, Any], ctx: ToolContext) -> str:
        first = super().target(args, ctx)
        return first or json.dumps(args, ensure_ascii=False, sort_keys=True)[:200]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        from agentui.mcp.client import McpCallTimeout, McpUnavailable

        if not self.conn.alive:
            # "not available" is an environmental signature for R4a (agent_validator.ENV_PATTERNS)
            return self.fail(args, f"MCP server '{self.server}' is not available (not running): "
                                   f"{self.conn.error or 'stopped'}")
        shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
        if self.decision.ask:
            assessment = assess_call(self.name, args, reason=self.decision.why)
            if self.decision.once_only:  # a destructive tool: never an approval stored for later calls
                assessment = replace(assessment, once_only=True, patterns=())
        else:  # runs unasked, but through the gate: remembered never:/ask: rules still apply
            assessment = SAFE
        # the scoped gate entry point for non-shell tools: arguments shown, pattern = tool name
        # never "sandboxed": the server process runs outside our OS sandbox, so `--yes` cannot approve it
        denial = await gate(ctx, self.name, f"{self.name} {shown}", assessment, confined=False)
        if denial is not None:
            return self.fail(args, denial)
        timeout = self.timeout_s or ctx.timeout_s
        listener = self.hub.on_progress if self.hub is not None else None
        progress = None
        if listener is not None and ctx.call_id:
            def progress(done: float, total: float | None, message: str | None) -> None:
                listener(ctx.call_id, progress_line(done, total, message))
        try:
            out = await self.conn.call(self.remote_name, args, timeout, progress)
        except McpCallTimeout as exc:
            return self.fail(args, f"MCP tool {self.name} timed out: {exc}")
        except McpUnavailable as exc:
            return self.fail(args, f"MCP server '{self.server}' is not available: it {exc}")
        if out.ok:
            return self.ok(args, out.text)
        return self.fail(args, f"{self.name}: {out.error}", evidence=out.text)


class McpHub:
    def __init__(self, servers: dict[str, McpServerConfig], *, cwd: str | None = None,
                 inproc: dict[str, Any] | None = None) -> None:
        self.servers = {n: c for n, c in sorted(servers.items()) if c.enabled}
        self.cwd = cwd
        self.inproc = inproc or {}  # name → SDK server object served in-process (tests)
        self.connections: dict[str, Any] = {}
        self.starting: dict[str, Any] = {}  # connections still starting (closed by aclose too)
        self.reports: list[ServerReport] = []
        # (call id, one line) for each progress notification of a running call: a front end shows it
        self.on_progress: Any = None
        # a server's `elicitation/create`: `ask(Elicitation) -> Answer` is the front end's form; without
        # one the request is declined, and `why_not_ask` says why in the line given to `on_log`
        self.ask: Any = None
        self.why_not_ask = "nothing here can ask you"
        self.on_log: Any = None  # one line (a declined request); None: a warning on stderr
        self.on_report: Any = None  # each server's ServerReport as it comes (a front end counts them)

    async def answer_elicitation(self, server: str, mode: str, message: str, schema: Any, url: str) -> Any:
        from agentui.mcp.elicit import respond

        def log(line: str) -> None:
            if self.on_log is not None:
                with contextlib.suppress(Exception):
                    self.on_log(line)
            else:
                print(f"warning: {line}", file=sys.stderr, flush=True)

        return await respond(server, mode, message, schema, url, self.ask, self.why_not_ask, log)

    async def start(self) -> list[ServerReport]:
        from agentui.mcp.client import MAX_TOOLS, McpConnection, McpUnavailable

        async def one(name: str, cfg: McpServerConfig) -> ServerReport:
            conn = McpConnection(name, cfg, cwd=self.cwd, inproc=self.inproc.get(name))
            conn.answer_elicitation = self.answer_elicitation
            started = time.monotonic()
            self.starting[name] = conn
            try:
                await conn.start()
            except McpUnavailable as exc:
                return ServerReport(name, False, [], time.monotonic() - started, str(exc),
                                    needs_sign_in=conn.needs_sign_in)
            finally:
                self.starting.pop(name, None)
            self.connections[name] = conn
            names = [t.name for t in conn.tools]
            left = [f"{len(conn.skipped)} tools left out (names must be letters, digits, _ . - and "
                    f"unique, at most {MAX_TOOLS}): {', '.join(conn.skipped[:5])}"] if conn.skipped else []
            if conn.invalid:
                left.append(f"{len(conn.invalid)} tools left out (their definition is invalid): "
                            f"{', '.join(t for t, _ in conn.invalid[:5])}")
            warnings = [f"MCP server '{name}': {left[0]}"] if conn.skipped else []
            warnings += [f"MCP server '{name}': tool '{t}' left out: {why}" for t, why in conn.invalid]
            return ServerReport(name, True, names, time.monotonic() - started,
                                "; ".join([f"{len(names)} tools, protocol {conn.protocol_version or '?'}", *left]),
                                warnings, {t.name: t.hints for t in conn.tools})

        async def reported(name: str, cfg: McpServerConfig) -> None:
            self.reports.append(await one(name, cfg))
            if self.on_report is not None:
                with contextlib.suppress(Exception):  # a display problem never stops a start
                    self.on_report(self.reports[-1])

        self.reports = []
        await asyncio.gather(*(reported(n, c) for n, c in self.servers.items()))
        order = list(self.servers)
        self.reports.sort(key=lambda r: order.index(r.name))
        return self.reports

    async def sign_in(self, name: str, say: Any, *, registry: Any = None, open_browser: bool = True,
                      timeout_s: float = 300.0) -> ServerReport:
        """An OAuth sign-in to `name` with a person at the browser (`say` gets the lines for them), kept
        for later runs; the server then runs here, its tools added to `registry` when given. Raises
        McpUnavailable with the reason."""
        from agentui.mcp.client import McpConnection
        from agentui.mcp.oauth import CredentialStore, LoopbackLogin, provider, unattended

        cfg = self.servers[name]
        store = CredentialStore(cfg.url or "")
        store.forget()  # a fresh registration: the redirect address changes with each sign-in
        started = time.monotonic()
        async with LoopbackLogin(say, open_browser=open_browser, timeout_s=timeout_s) as login:
            conn = McpConnection(name, cfg, cwd=self.cwd)
            conn.answer_elicitation = self.answer_elicitation
            conn.auth = provider(name, cfg.url or "", login=login, store=store)
            try:
                await conn.start(timeout_s=timeout_s + cfg.startup_timeout_s)
            except BaseException:
                store.forget()  # a half-done sign-in (a registration, no token) is not kept
                raise
        unattended(conn.auth, name)  # a later re-sign-in is asked for by name, never mid-task
        old = self.connections.pop(name, None)
        if old is not None:
            with contextlib.suppress(Exception):
                await old.close()
        self.connections[name] = conn
        report = ServerReport(name, True, [t.name for t in conn.tools], time.monotonic() - started,
                              f"{len(conn.tools)} tools, protocol {conn.protocol_version or '?'}", [],
                              {t.name: t.hints for t in conn.tools})
        self.reports = [r for r in self.reports if r.name != name] + [report]
        if registry is not None:
            conn.on_change = lambda: self._register_one(registry, name)
            self._register_one(registry, name)
        return report

    def register(self, registry: Any) -> list[str]:
        """Add every started server's tools to `registry`; returns the names added. A server that
        later says its tool list changed has its new tools added the same way."""
        added: list[str] = []
        for name, conn in sorted(self.connections.items()):
            conn.on_change = lambda n=name: self._register_one(registry, n)
            added += self._register_one(registry, name)
        return added

    def _register_one(self, registry: Any, name: str) -> list[str]:
        added: list[str] = []
        conn = self.connections.get(name)
        if conn is not None:
            cfg = self.servers[name]
            for t in conn.tools:
                tool = McpTool(conn, t.name, t.description, t.input_schema,
                               allowed=t.name in cfg.allow, timeout_s=cfg.timeout_s, hints=t.hints,
                               trust_read_only=cfg.trust_read_only)
                if tool.name in registry:
                    continue
                tool.hub = self
                registry.register(tool)
                added.append(tool.name)
        return added

    async def attach(self, registry: Any) -> list[str]:
        """Start the servers and register their tools; returns one problem line per failed server."""
        reports = await self.start()
        self.register(registry)
        return [line for r in reports for line in (
            r.warnings if r.ok else [f"MCP server '{r.name}' {r.detail} (its tools are unavailable)"])]

    @property
    def ready(self) -> bool:
        """Every server has started or failed (`reports` is complete)."""
        return not self.starting and len(self.reports) == len(self.servers)

    async def aclose(self) -> None:
        for conn in [*self.connections.values(), *self.starting.values()]:
            with contextlib.suppress(Exception):
                await conn.close()
        self.connections.clear()


async def probe_servers(servers: dict[str, McpServerConfig]) -> list[ServerReport]:
    """Start each server, list its tools, stop it (for `agentui mcp list` and `doctor`)."""
    hub = McpHub(servers)
    try:
        return await hub.start()
    finally:
        await hub.aclose()
