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
import re
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
    "mcp": ("The MCP servers of this session and their tools (`/mcp resources`: what @server:uri attaches)",
            "resources"),
    "memory": ("What agentui remembers (most recent first)", "how many (default 10)"),
    "remember": ("Remember a rule every plan reads (C level, space user), as the TUI's /remember does",
                 "the rule, e.g. always run the tests first"),
    "forget": ("Delete one Megram (asks first)", "its id or a prefix (/memory lists them)"),
    "audit": ("The Auditor's report of this session: messages, tasks and anomalies", None),
    "tree": ("The goal tree of the session's folder: its outline and what runs next", None),
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


def commands(prompts: list[tuple[str, Any]] | None = None) -> list[AvailableCommand]:
    """agentui's verbs, then each MCP server's prompts as `<server>.<prompt>`."""
    out = [AvailableCommand(name=name, description=desc,
                            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None)
           for name, (desc, hint) in COMMANDS.items()]
    for server, p in prompts or []:
        hint = " ".join(f"{a}=…" if req else f"[{a}=…]" for a, req in p.arguments)
        out.append(AvailableCommand(
            name=f"{server}.{p.name}", description=f"[MCP {server}] {p.description or 'a prompt'}"[:300],
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None))
    return out


def mcp_prompts(hub: Any) -> list[tuple[str, Any]]:
    """(server, PromptInfo) of every running server of the session's hub."""
    conns = getattr(hub, "connections", None) or {}
    return [(name, p) for name, conn in sorted(conns.items()) for p in getattr(conn, "prompts", [])]


def prompt_call(text: str, prompts: list[tuple[str, Any]]) -> tuple[tuple[str, Any], dict[str, str] | str] | None:
    """`/<server>.<prompt> …` → ((server, prompt), its arguments), or the reason they are wrong as
    a string; None when the text calls no prompt. Arguments are `name=value` words (quote a value
    with spaces); a prompt with one argument also takes the whole rest as its value."""
    import shlex

    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].partition(" ")
    found = next(((srv, p) for srv, p in prompts if f"{srv}.{p.name}" == head), None)
    if found is None:
        return None
    names = [a for a, _req in found[1].arguments]
    rest = rest.strip()
    try:
        words = shlex.split(rest)
    except ValueError as e:
        return found, f"/{head}: {e}"
    args: dict[str, str] = {}
    if len(names) == 1 and rest and not all("=" in w for w in words):
        args = {names[0]: rest}
    else:
        for w in words:
            key, sep, value = w.partition("=")
            if not sep or key not in names:
                return found, f"/{head} takes {', '.join(f'{n}=…' for n in names) or 'no arguments'}; got {w!r}"
            args[key] = value
    missing = [a for a, req in found[1].arguments if req and a not in args]
    if missing:
        return found, f"/{head} needs {', '.join(f'{n}=…' for n in missing)}"
    return found, args


_ATTACH = re.compile(r"(?<!\S)@([A-Za-z0-9_-]{1,40}):(\S+)")  # `@server:uri`
MAX_ATTACHED = 20_000  # characters of one resource attached to a prompt


async def attach_resources(text: str, connections: dict[str, Any]) -> tuple[str, list[str]]:
    """`@<server>:<uri>` words of a running server: the resource's text is attached below the prompt
    (capped); one problem line for each that could not be read. Other `@` words stay as they are."""
    parts: list[str] = []
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for m in _ATTACH.finditer(text):
        server, uri = m.group(1), m.group(2).rstrip(".,;:!?)")
        conn = connections.get(server)
        if conn is None or (server, uri) in seen:
            continue
        seen.add((server, uri))
        try:
            body = await conn.read_resource(uri)
        except Exception as e:  # noqa: BLE001 - the prompt still runs, without it
            problems.append(f"@{server}:{uri} could not be read: {e}")
            continue
        cut = body if len(body) <= MAX_ATTACHED else body[:MAX_ATTACHED] + f"\n[… cut at {MAX_ATTACHED} characters]"
        parts.append(f"[resource @{server}:{uri}]\n{cut}")
    return ("\n\n".join([text, *parts]) if parts else text), problems


def resources_text(hub: Any) -> str:
    conns = getattr(hub, "connections", None) or {}
    lines = [f"@{name}:{r.uri}" + (" (template: fill in the {…})" if r.template else "")
             + (f" — {r.description or r.name}" if (r.description or r.name) else "")
             for name, conn in sorted(conns.items()) for r in getattr(conn, "resources", [])]
    return "\n".join(lines) if lines else "No MCP resources in this session."


def parse_command(text: str) -> tuple[str, str] | None:
    """("memory", "5") for "/memory 5"; None when the text is not one of the commands."""
    if not text.startswith("/"):
        return None
    name, _, rest = text[1:].partition(" ")
    return (name, rest.strip()) if name in COMMANDS else None


def help_text() -> str:
    lines = ["agentui commands:"]
    lines += [f"/{name} — {desc}" for name, (desc, _h) in COMMANDS.items()]
    lines.append("/<server>.<prompt> name=value … — an MCP server's prompt, run as the goal")
    lines.append("@<server>:<uri> in a goal attaches that MCP resource's text")
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


USER_SPACE = "user"  # the user-wide space every plan reads, as the TUI and `agentui memory remember` write


def remember_text(memory: Any, text: str) -> str:
    """`/remember TEXT`: a C-level rule in space `user`, stored at once (no model call)."""
    if not text:
        return "/remember TEXT — e.g. /remember run the tests before committing"
    try:
        m = memory.remember(text, level="C", space=USER_SPACE, entity="env:local")
    except Exception as e:  # noqa: BLE001 - a command's failure is its answer, never a crash
        return f"/remember: memory is not available: {e}"
    return f"remembered: {m.content[:300]}  (id {m.id}; C level, space {m.space}: read for every plan)"


def audit_text(runtime: Any) -> str:
    """`/audit`: an on-demand report of the session's Auditor, and its latest anomalies."""
    auditor = getattr(runtime, "auditor", None)
    if auditor is None:
        return "The Auditor is not running in this session."
    try:
        r = auditor.report("on_demand")
    except Exception as e:  # noqa: BLE001 - a command's failure is its answer, never a crash
        return f"/audit: no report: {e}"
    lines = [f"report: {r.summary or f'{r.messages_seen} messages, {r.tasks_seen} tasks'}"]
    lines += [f"{e.severity.value} {e.kind.value}: {e.message[:300]}" for e in r.events[-10:]]
    return "\n".join(lines)


def tree_text(cwd: str) -> str:
    """`/tree`: the goal tree in the session's folder, as `agentui tree status` outlines it."""
    from pathlib import Path

    from agentui.tree.layout import StateError, TreeLayout
    from agentui.tree.model import TreeInvalid, load_tree, select
    from agentui.tree.view import outline

    lay = TreeLayout(Path(cwd or ".").expanduser())
    if not lay.exists():
        return (f"No goal tree in {cwd}; start one with: "
                'agentui tree init "your goal" --guard "make test"')
    try:
        root = load_tree(lay.tree)
        s = select(root)
        return "\n".join([*outline(root, s), s.line()])
    except (TreeInvalid, StateError, OSError) as e:
        return f"/tree: the goal tree in {cwd} cannot be read: {e}"


def usage_text(tokens: dict[str, Any]) -> str:
    if not tokens:
        return "No LLM calls in this session yet."
    lines = [f"{tid}: {t.prompt} prompt + {t.completion} completion tokens in {t.calls} calls"
             for tid, t in tokens.items()]
    total = sum(t.prompt + t.completion for t in tokens.values())
    return "\n".join([*lines, f"total: {total} tokens"])
