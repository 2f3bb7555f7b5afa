"""Tool registry: the one door through which R3 calls tools (DESIGN §5).

`ToolRegistry.call` validates arguments, refuses blocked tools, times the call, sets the record's
`target` (the unit of GGS `blocked_targets`), caps the evidence the LLMs see (head + tail) and
hands the full output to the task log. It never raises except for cancellation: every failure
is a `ToolCallRecord` with `ok=False`, an environmental failure the loop can route around.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentui.contracts import ToolCallRecord
from agentui.tools.approvals import Approvals
from agentui.tools.context import Announce, ConfirmFn, GateRequest, RulesFn, ToolContext
from agentui.tools.gate import gate, sandbox_active

__all__ = ["BaseTool", "ConfirmFn", "GateRequest", "Tool", "ToolContext", "ToolRegistry", "cap_output",
           "gate", "resolve_in", "sandbox_active"]


def brief(tool: Any) -> str:
    """What a small model needs to pick the tool, in one short line: the tool's own `brief`, else
    its description up to the first sentence end or semicolon (at most 80 characters). The full
    description (who is asked, what is refused) is for people and for clients that list tools; in
    the executor's prompt it would cost about a third of each call's tokens."""
    own = getattr(tool, "brief", "")
    if own:
        return own
    text = " ".join(str(getattr(tool, "description", "")).strip().split("\n")[0].split())
    first = re.split(r"(?<=[.;])\s", text, maxsplit=1)[0].rstrip(".;")
    return first if len(first) <= 80 else first[:79].rstrip() + "…"


@runtime_checkable
class Tool(Protocol):
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments (type "object")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord: ...


class BaseTool:
    """Defaults shared by the built-in tools. `available=False` hides a tool from `specs()`."""

    name: str = ""
    description: str = ""
    brief: str = ""  # the executor's one-line view of the tool; the description's first clause when empty
    parameters: dict[str, Any] = {}
    available: bool = True

    def target(self, args: dict[str, Any], ctx: ToolContext) -> str:
        """The normalised input recorded as `ToolCallRecord.target`."""
        required = self.parameters.get("required") or []
        return str(args.get(required[0], "")) if required else ""

    def ok(self, args: dict[str, Any], evidence: str, *, exit_code: int | None = None,
           writes: tuple[str, ...] | list[str] = ()) -> ToolCallRecord:
        return ToolCallRecord(tool=self.name, args=args, ok=True, evidence=evidence, exit_code=exit_code,
                              writes=list(writes))

    def fail(
        self, args: dict[str, Any], error: str, *, evidence: str = "", exit_code: int | None = None
    ) -> ToolCallRecord:
        return ToolCallRecord(
            tool=self.name, args=args, ok=False, error=error, evidence=evidence, exit_code=exit_code
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        raise NotImplementedError


def resolve_in(workspace: Path, raw: str) -> Path:
    """A user/LLM path: `~` expanded, relative paths taken from the workspace, `..` folded."""
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = workspace / path
    return Path(os.path.normpath(path))


def shown(workspace: Path, path: str | Path) -> str:
    """How a tool names a path to the model: relative to the workspace when inside it ("." for the
    workspace itself), else as given. Small models copy long absolute paths badly, and each costs
    ~25 prompt tokens every time it is repeated."""
    raw = str(path)
    p = Path(os.path.normpath(Path(raw).expanduser())) if raw else Path(".")
    if not p.is_absolute():
        return raw
    for ws in (Path(os.path.normpath(workspace)), Path(os.path.realpath(workspace))):
        try:
            return str(p.relative_to(ws))
        except ValueError:
            continue
    return raw


def cap_output(text: str, cap: int) -> str:
    """Keep the head and the tail of `text` within `cap` characters, marking what was dropped."""
    if len(text) <= cap:
        return text
    omitted = len(text)
    marker = ""
    for _ in range(3):  # the marker's length depends on the number it holds
        marker = f"\n… [{omitted} chars omitted] …\n"
        keep = max(cap - len(marker), 0)
        omitted = len(text) - keep
    keep = max(cap - len(marker), 0)
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + marker + (text[len(text) - tail :] if tail else "")


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


#: the built-in tools' arguments that go to a command line or the file system, where no NUL can be
_NO_NUL = frozenset({"command", "path", "pattern", "query"})


def validate_args(schema: dict[str, Any], args: Any) -> str | None:
    """Check required keys and the JSON types of known properties. Extra keys are ignored."""
    if not isinstance(args, dict):
        return f"arguments must be a JSON object, got {type(args).__name__}"
    for key in schema.get("required", []):
        if key not in args:
            return f"missing required argument '{key}'"
    for key, prop in (schema.get("properties") or {}).items():
        if key not in args or "type" not in prop:
            continue
        value = args[key]
        expected = _JSON_TYPES.get(prop["type"], (object,))
        if isinstance(value, bool) and bool not in expected:
            return f"argument '{key}' must be {prop['type']}, got boolean"
        if not isinstance(value, expected):
            return f"argument '{key}' must be {prop['type']}, got {type(value).__name__}"
        if isinstance(value, str) and "\0" in value and key in _NO_NUL:
            # a NUL cannot be in a command line, a path or a pattern: say so, not "ValueError: embedded
            # null byte"
            return (f"argument '{key}' holds a NUL character (\\0), which no command line, path or pattern can "
                    f"hold; write it without one (in a shell command, printf '\\000' makes one)")
    return None


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._log_seq = itertools.count(1)
        self.approvals: Approvals | None = None  # set by the runtime (project allow-list file)
        self.sandbox: Any = None  # sandbox.SandboxInfo; detected on first call when None
        self.unconfined = False  # --unconfined: no OS sandbox for any tool process
        self.announce: Announce | None = None  # set by the runtime: gate outcomes → bus → Auditor
        self.rules: RulesFn | None = None  # set by the runtime: memory's `tool:<name>` rules
        self.watchers: list[Any] = []  # hooks.ToolWatcher: each call's start and end, live
        self.host: Any = None  # hooks.HostIO for every call whose context has none
        self._call_seq = itertools.count(1)

    def sandbox_status(self) -> Any:
        """The sandbox every tool process of this registry runs in: `.active`, `.name`, `.detail`
        (None-free: detected on first use). The TUI's status line reads it."""
        if self.sandbox is None:
            from agentui.tools.sandbox import detect

            self.sandbox = detect()
        if self.unconfined:
            from agentui.tools.sandbox import SandboxInfo

            return SandboxInfo("none", None, "turned off by --unconfined")
        return self.sandbox

    def _bind(self, ctx: ToolContext) -> ToolContext:
        """Fill the context's approvals and sandbox from the registry's (explicit values win).
        In place: the caller's context keeps accumulating `waited_s`."""
        if ctx.approvals is None:
            if self.approvals is None:
                self.approvals = Approvals()
            ctx.approvals = self.approvals
        if ctx.sandbox is None:
            if self.sandbox is None:
                from agentui.tools.sandbox import detect

                self.sandbox = detect()
            ctx.sandbox = self.sandbox
        if ctx.unconfined is None:
            ctx.unconfined = self.unconfined
        if ctx.announce is None:
            ctx.announce = self.announce
        if ctx.rules is None:
            ctx.rules = self.rules
        if ctx.host is None:
            ctx.host = self.host
        return ctx

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        return sorted(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def specs(self, exclude: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Function specs for the LLM, sorted by name; excluded and unavailable tools left out."""
        skip = set(exclude)
        return [
            {"name": t.name, "description": t.description, "brief": brief(t), "parameters": t.parameters}
            for name, t in sorted(self._tools.items())
            if name not in skip and getattr(t, "available", True)
        ]

    def _tool_as_command(self, command: str, output: str) -> str:
        """" (read_file is a tool, not a shell command: …)" when a shell command failed because its
        program is one of our tools: a small model runs `read_file docs/in.txt` as a shell command,
        and a validator then tells it to install the program."""
        for m in _NOT_FOUND.finditer(output or ""):
            tool = self._tools.get(m.group(1))
            # the name must stand where a command does, not only in printed text
            ran = re.search(rf"(?:^|[|;&(`]|\$\()\s*{re.escape(m.group(1))}(?:\s|$)", command)
            if tool is not None and m.group(1) != "shell" and ran:
                params = ", ".join(f'"{p}": …' for p in (tool.parameters.get("required") or []))
                return (f" ({m.group(1)} is a tool, not a shell command: call it as "
                        f'{{"tool": "{m.group(1)}", "args": {{{params}}}}})')
        return ""

    async def call(self, name: str, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        started = time.monotonic()
        waited_before = ctx.waited_s
        ctx = self._bind(ctx)
        ctx.call_id = f"{ctx.task_id or 'task'}/call-{next(self._call_seq)}"
        safe_args = args if isinstance(args, dict) else {}
        target = ""
        tool = self._tools.get(name)
        try:
            if tool is None:
                known = ", ".join(spec["name"] for spec in self.specs(ctx.blocked_tools))
                record = _failed(name, safe_args, f"unknown tool '{name}' (known: {known})")
            elif (problem := validate_args(tool.parameters, args)) is not None:
                record = _failed(name, safe_args, f"bad arguments for {name}: {problem}")
            else:
                target = _target(tool, args, ctx)
                self._watch(name, args, target, ctx)
                if name in ctx.blocked_tools:
                    record = _failed(name, args, f"tool '{name}' is blocked for this task")
                else:
                    record = await tool.run(args, ctx)
                    note = self._tool_as_command(str(args.get("command", "")), record.evidence) \
                        if name == "shell" and record.exit_code == 127 else ""
                    if note:
                        record = record.model_copy(update={"error": f"{record.error or 'exit code 127'}{note}"})
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            record = _failed(name, safe_args, f"{name} failed: {type(exc).__name__}: {exc}")
        full = record.evidence
        log_ref = f"{ctx.task_id or 'task'}/tool-{next(self._log_seq)}" if ctx.log else None
        record = record.model_copy(
            update={
                "target": target or record.target,
                "evidence": cap_output(full, ctx.output_cap_chars),
                # the user's think time at a confirmation is not the tool's running time
                "duration_s": max(time.monotonic() - started - (ctx.waited_s - waited_before), 0.0),
                "log_ref": log_ref,
            }
        )
        if ctx.log is not None:
            entry = {
                "tool": record.tool,
                "args": record.args,
                "target": record.target,
                "ok": record.ok,
                "exit_code": record.exit_code,
                "error": record.error,
                "duration_s": record.duration_s,
                "full_output": full,
                "task_id": ctx.task_id,
                "subtask_id": ctx.subtask_id,
                "log_ref": log_ref,
            }
            try:
                ctx.log(entry)
            except Exception:  # the log is evidence, not control flow
                pass
        self._watch(name, safe_args, record.target, ctx, record)
        return record

    def _watch(self, name: str, args: dict[str, Any], target: str, ctx: ToolContext,
               record: ToolCallRecord | None = None) -> None:
        if self.watchers:
            from agentui.tools.hooks import ToolEvent, notify

            notify(self.watchers, ToolEvent(ctx.call_id, name, args, target, ctx.task_id, ctx.subtask_id,
                                            ctx.workspace, record))


def _target(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> str:
    fn = getattr(tool, "target", None)
    if fn is None:
        return ""
    try:
        return str(fn(args, ctx))
    except Exception:
        return ""


_NOT_FOUND = re.compile(r"(?:^|\s|:\s)([\w.-]+): command not found", re.MULTILINE)


def _failed(name: str, args: dict[str, Any], error: str) -> ToolCallRecord:
    return ToolCallRecord(tool=name, args=args, ok=False, error=error)
