"""MCP tool annotations as a hint to the safety gate, never as a grant.

A server may mark a tool `readOnlyHint` (it changes nothing) or `destructiveHint` (it may destroy
something). The server says so about itself, so a hint alone never lets a tool run unasked:

- a tool with an explicit `destructiveHint: true` always asks, once, even when `allow` lists it
  (and a tool that claims both read-only and destructive is taken as destructive);
- a tool marked read-only runs without asking only when the user trusts that server's read-only
  hints (`trust_read_only = true` in its `[mcp.servers.NAME]` table, `mcp add --trust-read-only`);
- otherwise `allow` decides as before: listed → runs, not listed → asks.

A tool that runs without asking still passes the gate (remembered `never:` and `ask:` rules still
apply), so no hint is a way around a rule the user set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Hints:
    read_only: bool = False
    destructive: bool = False  # only an explicit `destructiveHint: true`


def hints_of(tool: Any) -> Hints:
    """The hints a listed tool (the SDK's Tool) carries; none when it has no annotations."""
    ann = getattr(tool, "annotations", None)
    if ann is None:
        return Hints()
    return Hints(read_only=getattr(ann, "read_only_hint", None) is True,
                 destructive=getattr(ann, "destructive_hint", None) is True)


@dataclass(frozen=True)
class Decision:
    ask: bool
    why: str  # shown in the question, or in `mcp list` when it runs without asking
    once_only: bool = False  # a destructive tool's approval is never stored for later calls


def decide(name: str, server: str, hints: Hints, *, allowed: bool, trust_read_only: bool) -> Decision:
    """Whether a call of `server`'s tool `name` asks first, and why."""
    if hints.destructive:
        return Decision(True, f"the MCP server '{server}' marks {name} as destructive", once_only=True)
    if allowed:
        return Decision(False, f"listed in [mcp.servers.{server}] allow")
    if hints.read_only and trust_read_only:
        return Decision(False, f"marked read-only by '{server}', whose read-only hints you trust")
    why = (f"calls a tool of the external MCP server '{server}' "
           f"(add \"{name}\" to [mcp.servers.{server}] allow to skip this")
    if hints.read_only:
        why += ", or trust its read-only hints: trust_read_only = true"
    return Decision(True, why + ")")


def label(hints: Hints, decision: Decision) -> str:
    """`mcp list`'s word for a tool."""
    mark = "runs without asking" if not decision.ask else "always asks (destructive)" if hints.destructive \
        else "asks first"
    hint = " [read-only]" if hints.read_only and not hints.destructive else ""
    return mark + hint
