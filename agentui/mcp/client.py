"""One MCP server connection on the `mcp` SDK (with listing.py, the only modules that import it).

The SDK's `Client` is an async context manager built on anyio task groups, so one owner task
enters it, lists the tools, and holds it open until `close()`; calls run from any task on the same
loop. A server that cannot start, or exits, is reported as :class:`McpUnavailable` with the tail
of its stderr — never a hang: startup and every call are bounded by timeouts.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentui.config import McpServerConfig
from agentui.mcp.annotations import Hints, hints_of

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
MAX_TOOLS = 200  # per server: every offered tool is a line in the executor's prompt
MAX_PAGES = 50  # tools/list pages read (a server paging forever is not a hang)
MAX_DESCRIPTION = 1000
STDERR_KEEP = 4000  # bytes of a stdio server's stderr kept for error messages


# the server whose connection is running the code that logs: set by each connection's owner task,
# inherited by the tasks the SDK starts inside it, so a log record names the server it is about
_SERVER: contextvars.ContextVar[str] = contextvars.ContextVar("agentui_mcp_server", default="")


class _SdkLog(logging.Handler):
    """The MCP SDK's log records, kept as one line each instead of printed with a traceback on
    stderr (which would also scribble over the TUI); a connection's error cites the last one that
    was logged while that connection's code ran — never another server's."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: deque[tuple[int, str, str]] = deque(maxlen=50)
        self.seq = 0

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        text = record.getMessage() + (f": {type(exc).__name__}" if exc else "")
        self.seq += 1
        self.lines.append((self.seq, _SERVER.get(), " ".join(text.split())[:200]))

    def since(self, seq: int, server: str) -> str:
        return next((line for n, who, line in reversed(self.lines) if n > seq and who == server), "")


SDK_LOG = _SdkLog()
for _name in ("mcp", "client"):  # the SDK's loggers ("client" is its session's)
    _logger = logging.getLogger(_name)
    _logger.addHandler(SDK_LOG)
    _logger.propagate = False


def _owner_context(key: str) -> contextvars.Context:
    ctx = contextvars.copy_context()
    ctx.run(_SERVER.set, key)
    return ctx


class McpUnavailable(Exception):
    """The server is not running (failed to start, exited, or closed the connection)."""


class McpCallTimeout(Exception):
    pass


@dataclass
class ToolInfo:
    name: str
    description: str
    input_schema: dict[str, Any]
    hints: Hints = field(default_factory=Hints)  # the server's readOnlyHint / destructiveHint


@dataclass
class PromptInfo:
    name: str
    description: str
    arguments: list[tuple[str, bool]]  # (name, required)


@dataclass
class ResourceInfo:
    uri: str  # a resource's URI, or a template's `uriTemplate`
    name: str
    description: str
    template: bool = False


@dataclass
class CallOutcome:
    ok: bool
    text: str
    error: str = ""


def expand_env(env: dict[str, str], source: dict[str, str] | None = None) -> dict[str, str]:
    """`${VAR}` in a configured value takes VAR from agentui's environment (secrets stay out of the file)."""
    src = os.environ if source is None else source
    return {k: _VAR.sub(lambda m: src.get(m.group(1), ""), v) for k, v in env.items()}


def expand_headers(headers: dict[str, str], source: dict[str, str] | None = None) -> dict[str, str]:
    """Like `expand_env`, but an unset variable or one with a line break is an error naming it (an
    empty or split auth header would only fail later, less clearly)."""
    src = os.environ if source is None else source
    for name, value in headers.items():
        for var in _VAR.findall(value):
            if not src.get(var):
                raise McpUnavailable(f"header {name} uses ${{{var}}}, which is not set in agentui's environment")
            if any(c in src[var] for c in "\r\n\0"):
                raise McpUnavailable(f"header {name}: ${{{var}}} has a line break or NUL in its value")
    return expand_env(headers, src)


def client_identity() -> Any:
    """How agentui introduces itself to a server (`clientInfo`), instead of the SDK's `mcp 0.1.0`."""
    from mcp.types import Implementation

    from agentui import __version__

    return Implementation(name="agentui", title="agentui", version=__version__)


_METADATA = re.compile(r'resource_metadata\s*=\s*"([^"]*)"|resource_metadata\s*=\s*([^\s,]+)')


def resource_metadata(www_authenticate: str) -> str:
    """The `resource_metadata` URL of a 401's WWW-Authenticate header (RFC 9728), or ""."""
    m = _METADATA.search(www_authenticate or "")
    url = (m.group(1) or m.group(2)) if m else ""
    return url if url.startswith(("https://", "http://")) and len(url) <= 500 else ""


def sdk_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcp")
    except PackageNotFoundError:
        return "?"


def _text_of(result: Any) -> str:
    """Content blocks → the text the LLM sees (images and binary resources are described)."""
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {getattr(block, 'mime_type', '?')}, {len(block.data or '')} base64 chars]")
        elif kind == "resource":
            res = block.resource
            text = getattr(res, "text", None)
            parts.append(text if text is not None else f"[resource {res.uri}]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.uri}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, sort_keys=True))
    return "\n".join(parts)


@dataclass
class McpConnection:
    name: str
    config: McpServerConfig
    cwd: str | None = None
    inproc: Any = None  # an SDK server object served in-process (tests use the SDK's in-memory server)
    tools: list[ToolInfo] = field(default_factory=list)
    protocol_version: str = ""
    error: str = ""

    def __post_init__(self) -> None:
        self._client: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[None] | None = None
        self._errlog: Any = None
        self._tail: _Tail | None = None
        self._tail_transport: Any = None
        self._dead = False
        self.http_status = ""  # the last HTTP error status of a `url` server
        self.auth_metadata = ""  # a 401's `WWW-Authenticate: Bearer resource_metadata="…"` URL
        self.auth: Any = None  # an OAuth provider with a person to sign in (`mcp login`); else one without
        self.sign_in = ""  # why an OAuth sign-in is needed, when the server asked for one
        self.skipped: list[str] = []  # listed tools left out (bad or repeated names, over MAX_TOOLS)
        self.invalid: list[tuple[str, str]] = []  # (tool, why): left out, the SDK would reject them
        self._log_seq = 0  # SDK log lines after this one, logged under `_log_key`, are this connection's
        self._log_key = f"{self.name}#{id(self)}"
        self._refresh_task: asyncio.Future[None] | None = None
        self.refreshes = 0  # tool lists re-read after a `tools/list_changed`
        self.prompts: list[PromptInfo] = []  # offered as `/<server>.<prompt>` commands in an editor
        self.resources: list[ResourceInfo] = []  # attached with `@<server>:<uri>`
        self.on_change: Any = None  # called after each re-read (the hub registers new tools)
        # `elicitation/create` → elicit.Answer: set by the hub (a front end's form); unset, declined
        self.answer_elicitation: Any = None
        self._asking: set[asyncio.Future[Any]] = set()  # forms open for this server's running calls

    @property
    def alive(self) -> bool:
        return self._client is not None and not self._dead

    def stderr_tail(self, n: int = 300) -> str:
        if self._tail is None:
            return ""
        text = bytes(self._tail.buf).decode("utf-8", "replace")
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        return " | ".join(lines[-3:])[-n:]

    def _why(self, base: str) -> str:
        """One line: what failed and what to do, with anything a server sent made visible, never obeyed."""
        from agentui.tools.safety import one_line

        return one_line(self._reason_line(base), 1200)

    def _reason_line(self, base: str) -> str:
        if self.http_status:  # the SDK's message does not say which HTTP error it was
            hint = " (check its `headers`)" if self.http_status.startswith("HTTP 403") else ""
            unattended = self.auth is None  # inside `mcp login` the advice to run it is no help
            if self.http_status.startswith("HTTP 401") and unattended:
                hint = f" (check its `headers`; a server that uses OAuth: `agentui mcp login {self.name}`)"
            if self.sign_in:  # an OAuth server: signed in to by a person (`mcp login`), never mid-task
                hint = f"; {self.sign_in}"
            elif self.auth_metadata and self.config.own_authorization:
                hint = (f"; it refused the `Authorization` header and offers an OAuth sign-in (resource metadata: "
                        f"{self.auth_metadata}): check the header, or remove it and run "
                        f"`agentui mcp login {self.name}`")
            elif self.auth_metadata and unattended:
                hint = f"; it asks for an OAuth sign-in: run `agentui mcp login {self.name}`"
            return f"{base}; the server answered {self.http_status}{hint}"
        if self.sign_in:
            return f"{base}; {self.sign_in}"
        said = SDK_LOG.since(self._log_seq, self._log_key)
        if said:  # e.g. "Failed to parse JSONRPC message from server" (its stdout is not JSON-RPC)
            base = f"{base} ({said})"
        tail = self.stderr_tail()
        return f"{base}; its stderr: {tail}" if tail else base

    def _values(self, values: dict[str, str], expand: Any) -> dict[str, str]:
        """Configured values with ${VAR} expanded; an ACP client's are taken literally (a client must
        not be able to send agentui's environment to a server it names)."""
        return dict(values) if getattr(self.config, "_literal", False) else expand(values)

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        cfg = self.config
        if self.inproc is not None:
            return self.inproc
        if cfg.url:  # our HTTP client: auth headers on every request, and the HTTP status of a refusal
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            headers = self._values(cfg.headers, expand_headers) or None

            async def status(response: Any) -> None:
                if response.status_code >= 400:
                    self.http_status = f"HTTP {response.status_code} {response.reason_phrase}".strip()
                    if response.status_code == 401:
                        self.auth_metadata = resource_metadata(response.headers.get("www-authenticate", ""))

            def client(headers: Any = None, timeout: Any = None, auth: Any = None) -> Any:
                http = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
                http.event_hooks["response"].append(status)
                return http

            auth = self._oauth()
            if cfg.transport == "sse":  # the legacy HTTP+SSE transport (protocol 2024-11-05)
                from mcp.client.sse import sse_client

                return sse_client(cfg.url, headers=headers, httpx_client_factory=client, auth=auth)
            http = await stack.enter_async_context(client(headers=headers, auth=auth))
            return streamable_http_client(cfg.url, http_client=http)
        # the child's stderr goes to a pipe of which only the last few KB are kept (a server that
        # floods stderr cannot fill a disk or our memory)
        r, w = os.pipe()
        self._errlog = os.fdopen(w, "wb", buffering=0)
        self._tail = _Tail()
        self._tail_transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: self._tail, os.fdopen(r, "rb", buffering=0))
        params = StdioServerParameters(command=cfg.command or "", args=list(cfg.args),
                                       env=self._values(cfg.env, expand_env) or None, cwd=cfg.cwd or self.cwd)
        return stdio_client(params, errlog=self._errlog)

    @property
    def needs_sign_in(self) -> bool:
        """It failed asking for an OAuth sign-in that only a person can give (`mcp login`, `/login`)."""
        return self.auth is None and bool(self.sign_in or (self.auth_metadata and not self.config.own_authorization))

    def _oauth_store(self) -> Any:
        """The stored OAuth sign-in of a `url` server with no `Authorization` header of its own, else None."""
        cfg = self.config
        if not cfg.url or self.inproc is not None or cfg.own_authorization:
            return None
        from agentui.mcp.oauth import CredentialStore

        return CredentialStore(cfg.url)

    def _oauth(self) -> Any:
        """OAuth for a `url` server with no `Authorization` header of its own: the stored sign-in (and
        its refresh) when there is one; a server that asks for a new sign-in fails naming `mcp login`."""
        from agentui.mcp.oauth import SignInNeeded, provider

        store = self._oauth_store()
        if store is None or (self.auth is None and not store.signed_in()):
            return None  # never signed in: a 401 names `mcp login` (and registers no client meanwhile)
        auth = self.auth or provider(self.name, store.url, store=store)
        conn = self

        def noted(handler: Any) -> Any:  # the reason is kept here: the SDK's transport may swallow it
            if getattr(handler, "noted", False):
                return handler

            async def run(*args: Any) -> Any:
                try:
                    return await handler(*args)
                except SignInNeeded as exc:
                    conn.sign_in = str(exc)
                    raise
            run.noted = True  # type: ignore[attr-defined]
            return run

        auth.context.redirect_handler = noted(auth.context.redirect_handler)
        auth.context.callback_handler = noted(auth.context.callback_handler)
        return auth

    async def start(self, timeout_s: float | None = None) -> None:
        """Connect and list the tools; raises McpUnavailable with the reason."""
        timeout_s = timeout_s or self.config.startup_timeout_s
        store = self._oauth_store() if self.auth is None else None
        if store is not None:
            from agentui.mcp.oauth import RefreshTurn

            # an expired sign-in is refreshed by one process at a time; the others then use its tokens
            async with RefreshTurn(store, timeout_s):
                await self._start(timeout_s)
            return
        await self._start(timeout_s)

    async def _start(self, timeout_s: float) -> None:
        self._log_seq = SDK_LOG.seq
        self._ready = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._own(), name=f"mcp:{self.name}",
                                          context=_owner_context(self._log_key))
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout_s)
        except TimeoutError:
            # the owner may still fail after this: its exception is read here, not left unretrieved
            self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())
            await self.close()
            self.error = self._why(f"did not answer within {timeout_s:g} s")
            raise McpUnavailable(self.error) from None
        except McpUnavailable:
            await self.close()
            raise
        except asyncio.CancelledError:  # the caller gave up (a session closed while it started)
            self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())
            await asyncio.shield(self.close())
            raise

    async def _own(self) -> None:
        from mcp import Client

        from agentui.mcp.listing import ToolListFilter

        assert self._ready is not None
        client: Any = None

        def version() -> str | None:
            with contextlib.suppress(Exception):
                return str(client.protocol_version or "") or None
            return None

        try:
            async with contextlib.AsyncExitStack() as stack:
                transport = await self._transport(stack)
                # one tool with an invalid schema must not fail the whole listing; the
                # in-process server (tests) is served without JSON-RPC, and validates its own tools
                listing = None if self.inproc is not None else ToolListFilter(transport, version)
                client = await stack.enter_async_context(Client(
                    listing or transport, read_timeout_seconds=None, client_info=client_identity(),
                    list_roots_callback=self._roots, message_handler=self._on_message,
                    elicitation_callback=self._elicitation))
                self.tools = await self._list_tools(client)
                await self._list_extras(client)
                self.invalid = list(listing.dropped) if listing is not None else []
                self.protocol_version = str(client.protocol_version or "")
                self._client = client
                if not self._ready.done():
                    self._ready.set_result(None)
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - anyio raises groups; the reason is what matters
            if self._tail is not None:
                await asyncio.sleep(0.1)  # the last of its stderr may still be in the pipe
            # an HTTP refusal is named by its status (the SDK's own words about it add only noise),
            # except inside `mcp login`, where the OAuth flow's own reason (a state mismatch) counts
            plain = self.sign_in or (self.http_status and self.auth is None)
            self.error = self._why("failed to start" if plain else f"failed to start: {_reason(exc)}")
            if not self._ready.done():
                self._ready.set_exception(McpUnavailable(self.error))
        finally:
            self._dead = True
            self._client = None

    async def _list_tools(self, client: Any) -> list[ToolInfo]:
        tools: dict[str, ToolInfo] = {}
        self.skipped = []
        cursor: str | None = None
        for _page in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            for t in page.tools:
                self._keep(tools, t)
            cursor = page.next_cursor
            if not cursor:
                break
        return list(tools.values())

    async def _list_extras(self, client: Any) -> None:
        """The server's prompts and resources (and resource templates), when it offers them; a
        failure here costs only these lists, never the server's tools."""
        caps = None
        with contextlib.suppress(Exception):
            caps = client.server_capabilities
        if getattr(caps, "prompts", None) is not None:
            with contextlib.suppress(Exception):
                listed = await asyncio.wait_for(client.list_prompts(), 10)
                self.prompts = [PromptInfo(p.name, (p.description or p.title or "")[:MAX_DESCRIPTION],
                                           [(a.name, bool(a.required)) for a in (p.arguments or [])])
                                for p in listed.prompts[:MAX_TOOLS] if _TOOL_NAME.match(p.name or "")]
        if getattr(caps, "resources", None) is not None:
            with contextlib.suppress(Exception):
                listed = await asyncio.wait_for(client.list_resources(), 10)
                self.resources = [ResourceInfo(str(r.uri), r.name or "", (r.description or "")[:300])
                                  for r in listed.resources[:MAX_TOOLS]]
            with contextlib.suppress(Exception):
                listed = await asyncio.wait_for(client.list_resource_templates(), 10)
                self.resources += [ResourceInfo(str(t.uri_template), t.name or "", (t.description or "")[:300], True)
                                   for t in listed.resource_templates[:MAX_TOOLS]]

    async def read_resource(self, uri: str, timeout_s: float = 30) -> str:
        """A resource's text (a binary one is described); raises McpUnavailable or ValueError."""
        client = self._client
        if client is None or self._dead:
            raise McpUnavailable(self.error or "not running")
        try:
            result = await asyncio.wait_for(client.read_resource(uri), timeout_s)
        except TimeoutError:
            raise ValueError(f"no answer within {timeout_s:g} s") from None
        except Exception as exc:  # noqa: BLE001 - the SDK's errors become one clear line
            raise ValueError(_reason(exc)) from None
        parts = []
        for c in result.contents:
            text = getattr(c, "text", None)
            parts.append(
                text if text is not None else f"[binary {getattr(c, 'mime_type', None) or '?'} resource {c.uri}]"
            )
        return "\n".join(parts)

    async def get_prompt(self, name: str, arguments: dict[str, str], timeout_s: float = 30) -> str:
        """A prompt's messages as one text (what the user would have typed); raises like read_resource."""
        client = self._client
        if client is None or self._dead:
            raise McpUnavailable(self.error or "not running")
        try:
            result = await asyncio.wait_for(client.get_prompt(name, arguments), timeout_s)
        except TimeoutError:
            raise ValueError(f"no answer within {timeout_s:g} s") from None
        except Exception as exc:  # noqa: BLE001
            raise ValueError(_reason(exc)) from None
        parts = []
        for m in result.messages:
            c = m.content
            text = getattr(c, "text", None)
            if text is None and getattr(c, "type", "") == "resource":
                text = getattr(c.resource, "text", None)
            parts.append(text if text is not None else f"[{getattr(c, 'type', 'content')}]")
        return "\n\n".join(p for p in parts if p)

    async def _on_message(self, message: Any) -> None:
        """Server notifications: `tools/list_changed` re-lists the tools (on a task of its own: the
        SDK's receive loop, which runs this, must stay free to read the answer)."""
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification) and self._client is not None:
            if self._refresh_task is None or self._refresh_task.done():
                self._refresh_task = asyncio.ensure_future(self._refresh())

    async def _refresh(self) -> None:
        client = self._client
        if client is None:
            return
        try:
            self.tools = await asyncio.wait_for(self._list_tools(client), self.config.startup_timeout_s)
        except Exception:  # noqa: BLE001 - the old list stays; the next change tries again
            return
        self.refreshes += 1
        if self.on_change is not None:
            with contextlib.suppress(Exception):
                self.on_change()

    def has_tool(self, name: str) -> bool:
        return any(t.name == name for t in self.tools)

    async def _roots(self, _context: Any) -> Any:
        """`roots/list`: agentui's workspace (else the server's configured cwd)."""
        from mcp.types import ListRootsResult, Root

        where = self.cwd or self.config.cwd
        if not where:
            return ListRootsResult(roots=[])
        path = Path(os.path.realpath(where))
        return ListRootsResult(roots=[Root(uri=path.as_uri(), name=path.name or str(path))])

    async def _elicitation(self, _context: Any, params: Any) -> Any:
        """`elicitation/create` (declared in `initialize`): the front end's answer, or decline. A form
        still open when its call ends (timed out, cancelled) is closed as `cancel`."""
        from mcp.types import ElicitResult

        from agentui.mcp.elicit import Answer, respond

        mode = getattr(params, "mode", None) or "form"
        message = getattr(params, "message", "")
        if self.answer_elicitation is not None:
            asking = asyncio.ensure_future(self.answer_elicitation(
                self.name, mode, message, getattr(params, "requested_schema", None), getattr(params, "url", "")))
        else:
            asking = asyncio.ensure_future(respond(self.name, mode, message, getattr(params, "requested_schema", None),
                                                   getattr(params, "url", ""), None, "nothing here can ask you",
                                                   _log_warning))
        self._asking.add(asking)
        try:
            answer = await asking
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # the server withdrew its request
                raise
            answer = Answer("cancel")  # its call ended while the form was open
        finally:
            self._asking.discard(asking)
        return ElicitResult(action=answer.action, content=answer.content)  # type: ignore[arg-type]

    def _close_forms(self) -> None:
        for asking in list(self._asking):
            asking.cancel()

    def _keep(self, tools: dict[str, ToolInfo], t: Any) -> None:
        """A listed tool joins unless its name is unusable, repeated, or over the cap (then it is
        counted in `skipped`, and `mcp list`/doctor say so)."""
        name = t.name if isinstance(t.name, str) else ""
        if not _TOOL_NAME.match(name) or name in tools or len(tools) >= MAX_TOOLS:
            self.skipped.append(name.encode("unicode_escape").decode("ascii")[:60] or "''")  # shown escaped
            return
        schema = t.input_schema if isinstance(t.input_schema, dict) else {}
        tools[name] = ToolInfo(name, (t.description or t.title or "")[:MAX_DESCRIPTION], dict(schema), hints_of(t))

    async def call(self, tool: str, args: dict[str, Any], timeout_s: float,
                   progress: Any = None) -> CallOutcome:
        """Call `tool`; `progress(done, total, message)` hears the server's progress notifications."""
        client = self._client
        if client is None or self._dead:
            raise McpUnavailable(self.error or "not running")

        async def heard(done: float, total: float | None, message: str | None) -> None:
            with contextlib.suppress(Exception):  # a display problem must not fail the call
                progress(done, total, message)

        try:
            result = await asyncio.wait_for(
                client.call_tool(tool, args, progress_callback=heard if progress is not None else None), timeout_s)
        except TimeoutError:
            self._close_forms()
            raise McpCallTimeout(f"no answer within {timeout_s:g} s") from None
        except asyncio.CancelledError:
            self._close_forms()
            raise
        except Exception as exc:  # noqa: BLE001 - the SDK's errors become one clear line
            reason = _reason(exc)
            if "closed" in reason.lower() or isinstance(exc, (OSError, EOFError)):
                self._dead = True
                self.error = self._why(f"exited or closed the connection during {tool} ({reason})")
                raise McpUnavailable(self.error) from None
            return CallOutcome(ok=False, text="", error=f"MCP error: {reason}")
        text = _text_of(result)
        if getattr(result, "is_error", False):
            return CallOutcome(ok=False, text=text, error=(text.strip().splitlines() or ["tool error"])[0][:300])
        return CallOutcome(ok=True, text=text)

    async def close(self) -> None:
        self._stop.set()
        if self._refresh_task is not None:
            self._refresh_task.cancel()
        owner = self._owner
        if owner is not None and not owner.done():
            try:
                await asyncio.wait_for(asyncio.shield(owner), 5)
            except (TimeoutError, Exception):  # noqa: BLE001 - a stuck server is cancelled below
                owner.cancel()
                with contextlib.suppress(BaseException):
                    await owner
        if self._errlog is not None:
            with contextlib.suppress(OSError):
                self._errlog.close()
            self._errlog = None
        if self._tail_transport is not None:
            self._tail_transport.close()
            self._tail_transport = None


class _Tail(asyncio.Protocol):
    """The last STDERR_KEEP bytes a server wrote to stderr."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if len(self.buf) > STDERR_KEEP:
            del self.buf[:-STDERR_KEEP]


def _log_warning(line: str) -> None:
    logging.getLogger("agentui.mcp").warning("%s", line)


def _reason(exc: BaseException) -> str:
    """The innermost useful message of a (possibly grouped) exception."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    msg = " ".join(str(exc).split()) or type(exc).__name__  # one line (pydantic's errors span several)
    return msg if len(msg) < 300 else msg[:297] + "…"
