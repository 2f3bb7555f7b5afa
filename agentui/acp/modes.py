"""ACP session modes, config options and slash commands.

Modes are the approval presets an editor can switch between:

- `ask`: every confirmation the safety gate raises goes to the editor (the default);
- `accept-edits`: a `write_file` that overwrites a file in the session's workspace is approved
  without asking; the rest asks (a write where code runs later, e.g. `.git/hooks`, still asks);
- `sandboxed-auto`: what `agentui run --yes` approves is approved — a command that runs inside the
  OS sandbox; the rest (no sandbox here, an escalation out of it, a secret, an MCP server's tool)
  asks.

No mode answers a secret read or a remembered `ask:` rule (`human_only`), and the hard deny-list
refuses before any question is raised, so no mode can get past it.

Config options are the model of each tier (brain and tool); a change takes effect at the next
prompt (the session's runtime is rebuilt between turns). Commands are agentui's own verbs, answered
without starting a task.
"""

from __future__ import annotations

import os
from typing import Any

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    UnstructuredCommandInput,
)

from agentui.contracts import ConfirmationChoice, ConfirmationRequest
from agentui.tools.answers import Answer, auto

ASK, ACCEPT_EDITS, SANDBOXED_AUTO = "ask", "accept-edits", "sandboxed-auto"
MODES = [
    SessionMode(id=ASK, name="Ask", description="Ask before every effect the safety gate holds back"),
    SessionMode(id=ACCEPT_EDITS, name="Accept edits",
                description="File writes inside the workspace run without asking; commands still ask"),
    SessionMode(id=SANDBOXED_AUTO, name="Sandboxed auto",
                description="What runs inside the OS sandbox runs without asking (like agentui run --yes); "
                            "the rest asks"),
]
MODE_IDS = {m.id for m in MODES}
TIERS = ("brain", "tool")  # config option ids: "<tier>_model"

COMMANDS = {
    "help": ("List agentui's commands", None),
    "mcp": ("The MCP servers of this session and their tools", None),
    "memory": ("What agentui remembers (most recent first)", "how many (default 10)"),
    "usage": ("Tokens used in this session, by task", None),
}


def mode_state(current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current, available_modes=MODES)


def _inside(path: str, workspace: str) -> bool:
    if not path:
        return False
    real = os.path.realpath(os.path.join(workspace, path))
    root = os.path.realpath(workspace)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def preset_answer(mode: str, req: ConfirmationRequest, workspace: str) -> Answer | None:
    """The mode's answer to a confirmation, or None (the editor is asked)."""
    if req.human_only or mode == ASK:
        return None
    if mode == ACCEPT_EDITS:
        if req.tool == "write_file" and not req.escalation and req.writes and all(
                _inside(w, workspace) for w in req.writes) and all(
                r.startswith("overwrites an existing file") for r in req.reasons):
            return Answer(ConfirmationChoice.APPROVE, "yes")
        return None
    if mode == SANDBOXED_AUTO:
        return auto(req, yes=True, unconfined=False)
    return None


def config_options(models: dict[str, str], known: list[str]) -> list[SessionConfigOptionSelect]:
    """One select per tier: its current model, among the models the endpoints list (and the
    configured ones)."""
    out = []
    for tier in TIERS:
        current = models.get(tier) or ""
        values = sorted({*known, *(m for m in models.values() if m)})
        if current not in values:
            values.insert(0, current)
        out.append(SessionConfigOptionSelect(
            id=f"{tier}_model", name=f"{tier.capitalize()} model", type="select", category="model",
            description=("Planning, reading the goal and the final check" if tier == "brain"
                         else "Tool calls and each step's check"),
            current_value=current,
            options=[SessionConfigSelectOption(value=v, name=v or "(the endpoint's default)") for v in values]))
    return out


def commands() -> list[AvailableCommand]:
    return [AvailableCommand(name=name, description=desc,
                             input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None)
            for name, (desc, hint) in COMMANDS.items()]


def parse_command(text: str) -> tuple[str, str] | None:
    """("memory", "5") for "/memory 5"; None when the text is not one of the commands."""
    if not text.startswith("/"):
        return None
    name, _, rest = text[1:].partition(" ")
    return (name, rest.strip()) if name in COMMANDS else None


def help_text() -> str:
    lines = ["agentui commands:"]
    lines += [f"/{name} — {desc}" for name, (desc, _h) in COMMANDS.items()]
    lines.append("Anything else is a goal: agentui plans it and runs it.")
    return "\n".join(lines)


def mcp_text(runtime: Any) -> str:
    hub = getattr(runtime, "mcp", None)
    reports = getattr(hub, "reports", None) or []
    if hub is not None and not getattr(hub, "ready", True):
        return "MCP servers still starting: " + ", ".join(sorted(hub.servers))
    if not reports:
        return "No MCP servers in this session (add one: agentui mcp add NAME -- COMMAND …)."
    lines = []
    for r in reports:
        if r.ok:
            lines.append(f"{r.name}: {r.detail}" + (f" — {', '.join(r.tools[:20])}" if r.tools else ""))
        else:
            lines.append(f"{r.name}: not running — {r.detail}")
    return "\n".join(lines)


async def memory_text(memory: Any, arg: str) -> str:
    n = int(arg) if arg.isdigit() and 0 < int(arg) <= 100 else 10
    try:
        recent = await memory.query_recent(n)
    except Exception as e:  # noqa: BLE001 - a command's failure is its answer, never a crash
        return f"memory is not available: {e}"
    if not recent:
        return "Nothing remembered yet."
    return "\n".join(f"[{m.space}/{m.entity}] {m.content[:300]}" for m in recent)


def usage_text(tokens: dict[str, Any]) -> str:
    if not tokens:
        return "No LLM calls in this session yet."
    lines = [f"{tid}: {t.prompt} prompt + {t.completion} completion tokens in {t.calls} calls"
             for tid, t in tokens.items()]
    total = sum(t.prompt + t.completion for t in tokens.values())
    return "\n".join([*lines, f"total: {total} tokens"])
