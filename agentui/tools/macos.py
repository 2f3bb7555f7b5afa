"""macOS automation tools: `applescript` (osascript) and `shortcuts` (the Shortcuts CLI).

They can do anything the user can, so on macOS every call asks for confirmation; elsewhere they
report themselves unavailable (and stay out of the LLM's tool specs).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from agentui.contracts import ToolCallRecord
from agentui.tools.registry import BaseTool, ToolContext, gate
from agentui.tools.safety import Assessment, Verdict
from agentui.tools.shell import run_process, sandboxed


class _MacTool(BaseTool):
    risk = ""

    def __init__(self, platform: str = sys.platform) -> None:
        self.platform = platform
        self.available = platform == "darwin"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        if not self.available:
            return self.fail(args, f"{self.name} is only available on macOS")
        subject = self.target(args, ctx)
        denial = await gate(ctx, self.name, subject, Assessment(Verdict.ASK, (self.risk,), once_only=True))
        if denial:
            return self.fail(args, denial)
        return await self.execute(args, ctx)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        raise NotImplementedError

    async def _run(self, args: dict[str, Any], argv: list[str], ctx: ToolContext) -> ToolCallRecord:
        result = await run_process(sandboxed(argv, ctx), cwd=ctx.workspace, timeout_s=ctx.timeout_s)
        if result.timed_out:
            return self.fail(args, f"timed out after {ctx.timeout_s:g}s", evidence=result.output)
        if result.returncode != 0:
            return self.fail(
                args, f"exit code {result.returncode}", evidence=result.output, exit_code=result.returncode
            )
        return self.ok(args, result.output, exit_code=0)


class AppleScriptTool(_MacTool):
    name = "applescript"
    description = "Run an AppleScript with osascript (macOS only; always asks the user)."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"script": {"type": "string"}},
        "required": ["script"],
    }
    risk = "AppleScript can control any application on this Mac"

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        return await self._run(args, ["osascript", "-e", args["script"]], ctx)


class ShortcutsTool(_MacTool):
    name = "shortcuts"
    description = "Run a named Shortcut, optionally with text input (macOS only; always asks the user)."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "input": {"type": "string"}},
        "required": ["name"],
    }
    risk = "a Shortcut can run any action on this Mac"

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        with tempfile.TemporaryDirectory(prefix="agentui-shortcut-") as tmp:
            argv = ["shortcuts", "run", args["name"]]
            if args.get("input") is not None:
                source = Path(tmp) / "input.txt"
                source.write_text(args["input"], encoding="utf-8")
                argv += ["--input-path", str(source)]
            output = Path(tmp) / "output"
            argv += ["--output-path", str(output)]
            record = await self._run(args, argv, ctx)
            if record.ok and output.is_file():
                produced = output.read_text(encoding="utf-8", errors="replace")
                record = record.model_copy(update={"evidence": record.evidence + produced})
            return record
