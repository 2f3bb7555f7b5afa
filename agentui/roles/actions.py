"""R3's action protocol and prompt window, kept apart from the loop.

- `action_model`: the JSON action schema (`tool` is an enum of the offered tools), accepting the
  shapes small models produce: arguments at the top level, `name`/`function` for `tool`,
  `arguments` as a JSON string, a bare string for a one-argument tool (`"args": "ls"` for shell).
- `order_tools`: the tools the intent names (or whose command it quotes) first.
- `Window`: the rolling prompt — the subtask, one line per earlier step, the last step in full
  (capped) — so a call stays near the ≤ 1,500-token design budget at any step; the full outputs
  stay in the task log.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, create_model, model_validator

from agentui.tools.nearby import end_exec

FINISH, INFEASIBLE = "finish", "infeasible"
_META = {"tool", "args", "output"}
_TOOL_KEYS = ("tool", "name", "tool_name", "action", "function")
_ARG_KEYS = ("args", "arguments", "parameters", "params", "input", "tool_input")
#: shell commands an intent may quote: such an intent wants the shell first
_SHELL_WORDS = re.compile(r"(?:^|[\s`'\"(])(grep|wc|ls|cat|find|awk|sed|sort|uniq|head|tail|cut|du|df|stat|"
                          r"xargs|tr|rg|python3?|echo|printf|test|diff|jq|file)\s|\|\s*\w", re.IGNORECASE)
# `$` at a line end: a merged question's intent holds one step per line (plan_normaliser.one_step)
_BUILTINS = frozenset({"cd", "echo", "printf", "test", "[", "for", "while", "if", "read", "export", "set", "type",
                       "command", "true", "false", "pwd", "source", ".", "eval", "exec", "let", "declare", "ulimit",
                       "umask", "wait", "(", "{", "!", "case", "until", "time"})
_QUOTED_CMD = re.compile(r"`([^`]{2,200})`|\bwith:\s*(.{2,200})$", re.IGNORECASE | re.MULTILINE)
# prose after the command: "with: python3 script.py and report the number it prints"
_TRAILING_PROSE = re.compile(r"(?:,?\s+and(?:\s+then)?|,?\s+then|;\s*then)\s+(?:report|tell|say|give|return|state|"
                             r"answer|show|print|output|write\s+down|note)\b.*$", re.IGNORECASE)


def short(text: str, n: int) -> str:
    text = text or ""
    if len(text) <= n:
        return text
    half = n // 2
    return f"{text[:half]}\n… [{len(text) - n} chars omitted] …\n{text[-half:]}"


FIX = " | what to do: "
#: tools whose kind is set by what they are told to run: a shell call's "tool class" is its command
COMMAND_TOOLS = frozenset({"shell"})
#: why the plan validator rejects a plan under break_symmetry; after its re-ask, the task ends
REPEATED_PLAN = "break_symmetry needs a different plan, but this one repeats the previous plan"
#: the workspace as the planner and executor see it: tools run there and name paths relative to it,
#: so its absolute path would only cost tokens and be copied wrong by small models
WORKSPACE_LINE = "Workspace: . (the current folder; name paths relative to it)"


def brief(text: str, n: int) -> str:
    """`text` cut to n chars, keeping its "what to do" part (the fix a retry or a replan needs)
    rather than cutting it off the end."""
    text = text or ""
    if len(text) <= n:
        return text
    why, sep, fix = text.partition(FIX)
    if not sep:
        return text[:n]
    fix = fix[:max(n // 2, n - len(sep) - 60)]
    return why[:max(n - len(sep) - len(fix), 0)] + sep + fix


def normalise_action(data: Any, required: dict[str, str]) -> Any:
    """Reshape a small model's tool call into {"tool", "args", "output"}; `required` maps a tool to
    its first required argument. Anything unrecognisable is returned as is (validation says why)."""
    if not isinstance(data, dict):
        return data
    d = dict(data)
    fn = d.get("function")
    if isinstance(fn, dict):  # OpenAI's {"function": {"name": …, "arguments": "…"}}
        d.pop("function")
        d.setdefault("tool", fn.get("name"))
        d.setdefault("args", fn.get("arguments"))
    if not isinstance(d.get("tool"), str):
        for k in _TOOL_KEYS[1:]:
            if isinstance(d.get(k), str):
                d["tool"] = d.pop(k)
                break
    if not isinstance(d.get("tool"), str):  # {"shell": "ls"} / {"read_file": {"path": …}}
        named = [k for k in d if k in required or k in (FINISH, INFEASIBLE)]
        if len(named) == 1:
            k = named[0]
            v = d.pop(k)
            d["tool"] = k
            d["output" if k in (FINISH, INFEASIBLE) else "args"] = v
    tool = d.get("tool")
    args: Any = None
    for k in _ARG_KEYS:
        if k in d:
            args = d.pop(k)
            break
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = None
        args = parsed if isinstance(parsed, dict) else (
            {required[tool]: args} if isinstance(tool, str) and tool in required else {"value": args})
    if not isinstance(args, dict):
        args = {}
    for k in [k for k in d if k not in _META]:  # arguments given at the top level
        args.setdefault(k, d.pop(k))
    if tool in (FINISH, INFEASIBLE):
        out = d.get("output")
        if not (isinstance(out, str) and out.strip()):
            vals = [v for v in args.values() if isinstance(v, str | int | float) and str(v).strip()]
            if vals:
                d["output"] = str(vals[0])
        args = {}
    elif isinstance(tool, str) and (req := required.get(tool)) and req not in args:
        strs = [k for k, v in args.items() if isinstance(v, str)]
        if len(strs) == 1:  # {"cmd": "ls"} for {"command": "ls"}
            args[req] = args.pop(strs[0])
    if d.get("output") is not None and not isinstance(d["output"], str):
        d["output"] = json.dumps(d["output"], ensure_ascii=False)
    d["args"] = args
    return d


def action_model(tools: list[str], required: dict[str, str] | None = None) -> type[BaseModel]:
    names = tuple(sorted(tools)) + (FINISH, INFEASIBLE)
    req = dict(required or {})

    def _shape(cls: Any, data: Any) -> Any:
        return normalise_action(data, req)

    return create_model(
        "ExecutorAction",
        # a Literal of names known only at run time, which no static type can spell
        tool=(Literal[names], ...),  # type: ignore[arg-type]
        args=(dict[str, Any], {}),
        output=(str, ""),
        # create_model accepts a decorated validator here although its annotation says a plain callable
        __validators__={"_shape": model_validator(mode="before")(_shape)},  # type: ignore[dict-item]
    )


def required_args(specs: list[dict[str, Any]]) -> dict[str, str]:
    out = {}
    for s in specs:
        req = s.get("parameters", {}).get("required") or []
        if req:
            out[s["name"]] = req[0]
    return out


def order_tools(specs: list[dict[str, Any]], intent: str) -> list[dict[str, Any]]:
    """The tool the intent names first; a quoted shell command puts shell first."""
    low = intent.casefold()

    def rank(s: dict[str, Any]) -> int:
        name = s["name"]
        if name == "shell" and _SHELL_WORDS.search(intent):
            return 0
        return 1 if re.search(rf"\b{re.escape(name)}\b", low) else 2

    return sorted(specs, key=rank)


def _runnable(cmd: str) -> bool:
    """Whether the command's first word is a program on PATH or a shell builtin: a plan's prose
    ("with: read_file 'numbers.txt'; Convert … with: map 'int' on …") is no command to suggest."""
    m = re.match(r"\s*(?:\w+=\S*\s+)*(\[|[\w./+-]+)", cmd)
    return m is not None and (m.group(1) in _BUILTINS or shutil.which(m.group(1)) is not None)


def suggested_call(intent: str, names: list[str]) -> str | None:
    """A one-line first call when the intent quotes a shell command (`…` or 'with: …')."""
    if "shell" not in names:
        return None
    m = _QUOTED_CMD.search(intent.strip())
    if not m:
        return None
    cmd = m.group(1) or _TRAILING_PROSE.sub("", m.group(2) or "")
    cmd = cmd.strip().rstrip(".")
    if not _SHELL_WORDS.search(f" {cmd} ") or not _runnable(cmd):
        return None
    # a JSON string cannot hold `\;` unescaped: the planner's `-exec … {}` comes without its end
    return json.dumps({"tool": "shell", "args": {"command": end_exec(cmd)}}, ensure_ascii=False)


@dataclass
class Window:
    """The executor's prompt, rebuilt each step: the subtask, one line per earlier step, and the
    last step in full (capped at `last_cap` characters)."""

    system: str
    task: str
    last_cap: int = 1500
    history: list[str] = field(default_factory=list)
    last: tuple[str, str] | None = None  # (the action as sent, what came back)
    _pending: str = field(default="", init=False, repr=False, compare=False)  # `last`'s history line

    def step(self, action_json: str, result: str, summary: str) -> None:
        if self.last is not None:
            self.history.append(self._pending)
        self.last = (action_json, short(result, self.last_cap))
        self._pending = f"{len(self.history) + 1}. {summary}"

    def messages(self) -> list[dict[str, str]]:
        task = self.task
        if self.history:
            task += "\nEarlier steps (full outputs are in the task log):\n" + "\n".join(self.history[-10:])
        msgs = [{"role": "system", "content": self.system}, {"role": "user", "content": task}]
        if self.last is not None:
            msgs += [{"role": "assistant", "content": self.last[0]}, {"role": "user", "content": self.last[1]}]
        return msgs


def one_line(text: str, n: int = 90) -> str:
    first = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return first if len(first) <= n else first[: n - 1] + "…"


def as_seen(text: str, workspace: Path) -> str:
    """`text` with the workspace's absolute path prefix taken off the paths inside it: the model
    sees workspace paths relative, as its prompts name them."""
    ws = str(workspace).rstrip("/")
    for root in dict.fromkeys((ws, os.path.realpath(ws))):
        text = text.replace(root + "/", "")
    return text
