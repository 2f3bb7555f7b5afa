"""A server's tools/list answer, tool by tool.

The SDK's client parses a tools/list answer as a whole, so one tool with an invalid input schema
fails the whole list and the server contributes nothing. `ToolListFilter` sits between the
transport and the SDK: it drops each tool the SDK would reject (the same checks, one tool at a
time) from the answer before the SDK reads it, and names it with the reason in `dropped`. Every
later listing the SDK makes (its output-schema refresh) goes through the same filter.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

FALLBACK_VERSION = "2025-11-25"  # the SDK's own when nothing was negotiated yet


def invalid_tool(tool: Any, listing: dict[str, Any], version: str | None) -> str | None:
    """Why the SDK would reject `tool` in the tools/list answer `listing` under `version`, or None
    (a fault elsewhere in the answer is not the tool's: the SDK reports it as before)."""
    from mcp.types import ListToolsResult
    from mcp_types import methods
    from pydantic import ValidationError

    one = {**listing, "tools": [tool]}
    checks: list[Callable[[], Any]] = [
        lambda: methods.validate_server_result("tools/list", version or FALLBACK_VERSION, one),
        lambda: ListToolsResult.model_validate(one, by_name=False),
    ]
    for check in checks:
        try:
            check()
        except ValidationError as exc:
            for err in exc.errors():
                if tuple(err["loc"][:2]) == ("tools", 0):
                    loc = ".".join(str(p) for p in err["loc"][2:]) or "tool"
                    what = "input schema" if loc.startswith("inputSchema") else "definition"
                    return one_line(f"invalid {what} ({loc}: {err['msg']})", 200)
        except (KeyError, ValueError):  # no such version or surface: the SDK does not check it either
            continue
    return None


def tool_name(tool: Any) -> str:
    """A listed tool's name for a message: escaped (a newline or a bidi override shows as such), short."""
    name = tool.get("name") if isinstance(tool, dict) else None
    return (name.encode("unicode_escape").decode("ascii")[:60] or "''") if isinstance(name, str) else "?"


def one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ToolListFilter:
    """A Transport (the SDK's protocol: an async context manager yielding a read and a write stream)
    around another one; `version` gives the protocol version the client negotiated."""

    def __init__(self, inner: Any, version: Callable[[], str | None]) -> None:
        self.inner = inner
        self.version = version
        self.dropped: list[tuple[str, str]] = []  # (tool name, why), for every listing read
        self._asked: set[Any] = set()  # ids of tools/list requests not answered yet

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self.inner.__aenter__()
        return _Read(read, self), _Write(write, self)

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)

    def sent(self, item: Any) -> None:
        msg = getattr(item, "message", None)
        if getattr(msg, "method", None) == "tools/list" and getattr(msg, "id", None) is not None:
            self._asked.add(msg.id)

    def received(self, item: Any) -> Any:
        from mcp.types import JSONRPCResponse

        msg = getattr(item, "message", None)
        if getattr(msg, "id", None) not in self._asked:
            return item
        self._asked.discard(msg.id)
        tools = msg.result.get("tools") if isinstance(msg, JSONRPCResponse) else None
        if not isinstance(tools, list):
            return item  # an error, or no list at all: the SDK says what is wrong
        version = self.version()
        keep = []
        for tool in tools:
            why = invalid_tool(tool, msg.result, version)
            if why is None:
                keep.append(tool)
            elif (name := tool_name(tool), why) not in self.dropped:
                self.dropped.append((name, why))
        if len(keep) == len(tools):
            return item
        fixed = msg.model_copy(update={"result": {**msg.result, "tools": keep}})
        return dataclasses.replace(item, message=fixed)


class _Stream:
    """One of the inner transport's streams, passed through (with its other attributes)."""

    def __init__(self, inner: Any, owner: ToolListFilter) -> None:
        self._inner, self._owner = inner, owner

    def __getattr__(self, name: str) -> Any:  # e.g. `last_context`, read by the SDK's dispatcher
        return getattr(self._inner, name)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Any:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class _Read(_Stream):
    async def receive(self) -> Any:
        return self._owner.received(await self._inner.receive())

    def __aiter__(self) -> _Read:
        return self

    async def __anext__(self) -> Any:
        return self._owner.received(await self._inner.__anext__())


class _Write(_Stream):
    async def send(self, item: Any, /) -> None:
        self._owner.sent(item)
        await self._inner.send(item)
