"""The status bar at the top: what the agent will act on and with what — workspace, model@endpoint
and its health, the sandbox, the memory's M/K/C/T counts (or, in a replay, what is replayed), and a
badge when the runtime started with problems (an MCP server that failed to start), and the MCP
servers as they start ("MCP: 2/3 ready", the failed ones named)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from textual.widgets import Static

from agentui.ui.glossary import tooltip
from agentui.ui.markup import escape


def short_path(p: str | Path) -> str:
    s = str(p)
    home = os.path.expanduser("~")
    return "~" + s[len(home):] if home and home != "/" and s.startswith(home) else s


def sandbox_label(runtime: Any) -> tuple[str, bool]:
    """(text, active). Hook for the sandbox status API: a runtime (or its tool registry)
    exposing `sandbox_status()` → str / object with `.active` and `.name` is shown as is; without
    it, commands run as the user, behind the safety gate's confirmations."""
    for owner in (runtime, getattr(runtime, "tools", None)):
        fn = getattr(owner, "sandbox_status", None)
        if fn is None:
            continue
        try:
            st = fn() if callable(fn) else fn
        except Exception:  # noqa: BLE001 - a status line never crashes the app
            continue
        if isinstance(st, str):
            return st, not st.startswith(("off", "no ", "none"))
        active = bool(getattr(st, "active", False))
        return str(getattr(st, "name", "") or getattr(st, "label", "") or ("on" if active else "off")), active
    return "no sandbox (asks before risky commands)", False


class StatusBar(Static):
    """One line, cut with "…" when narrow; the full text and the glossary are in its tooltip."""

    DEFAULT_CSS = (
        "StatusBar { height: 1; background: $panel; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }"
    )

    def __init__(self, **kw: Any) -> None:
        super().__init__("◆ agentui", **kw)
        self.fields: dict[str, str] = {"mode": "", "workspace": "", "model": "", "health": "", "sandbox": "",
                                       "memory": "", "mcp": "", "problems": ""}
        self.problem_lines: list[str] = []
        self.healthy: bool | None = None
        self.sandboxed = False
        self.text = ""
        self.shown = ""

    def set(self, **fields: Any) -> None:
        for k, v in fields.items():
            if k == "problems":  # the runtime's problem lines → a "⚠ N problems" badge
                self.problem_lines = [str(x) for x in v]
                n = len(self.problem_lines)
                self.fields["problems"] = f"⚠ {n} problem{'s' if n != 1 else ''}" if n else ""
            elif k == "healthy":
                self.healthy = v
            elif k == "sandboxed":
                self.sandboxed = bool(v)
            else:
                self.fields[k] = str(v)
        self._paint()

    def on_resize(self) -> None:
        self._paint()

    def _compact(self) -> dict[str, str]:
        """The fields, shortened step by step until the line fits the bar (80 columns cut the
        sandbox and the M/K/C/T counts); the full text stays in the tooltip."""
        f = dict(self.fields)
        width = self.size.width - 2 if self.size.width else 0
        steps = [("sandbox", lambda s: s.split(" (")[0]),
                 ("mode", lambda s: s.split(" of ")[0]),
                 ("workspace", lambda s: Path(s).name or s),
                 ("model", lambda s: s.split("@")[0]),
                 ("health", lambda s: "")]
        for key, shorten in steps:
            if not width or self._plain(f) <= width:
                return f
            f[key] = shorten(f[key]) if f[key] else f[key]
        for key in ("model", "workspace"):  # last: cut these two, never below 8 characters
            over = self._plain(f) - width
            if over > 0 and len(f[key]) > 9:
                f[key] = f[key][: max(8, len(f[key]) - over - 1)] + "…"
        return f

    def _plain(self, f: dict[str, str]) -> int:
        bits = ["◆ agentui", f["mode"], f"ws {short_path(f['workspace'])}" if f["workspace"] else "",
                f"{f['model']} ● {f['health']}" if f["model"] else "", f["sandbox"], f["memory"], f["mcp"],
                f["problems"]]
        return len(" │ ".join(b for b in bits if b))

    def _paint(self) -> None:
        parts, shown = self._parts(self._compact())
        self.shown = " │ ".join(shown)  # what fits the bar
        self.text = " │ ".join(self._parts(self.fields)[1])  # everything, as the tooltip has it
        self.update(" │ ".join(parts))
        whole = [self.fields[k] for k in ("mode", "workspace", "model", "health", "sandbox", "memory", "mcp")
                 if self.fields[k]]
        self.tooltip = "\n".join([*whole, *self.problem_lines, "", tooltip("M/K/C/T")])

    def _parts(self, f: dict[str, str]) -> tuple[list[str], list[str]]:
        parts = ["[b]◆ agentui[/b]"]
        plain = ["◆ agentui"]
        if f["mode"]:
            parts.append(f"[b $accent]{escape(f['mode'])}[/]")
            plain.append(f["mode"])
        if f["workspace"]:
            parts.append(f"ws [b]{escape(short_path(f['workspace']))}[/b]")
            plain.append(f"ws {short_path(f['workspace'])}")
        if f["model"]:
            dot = {True: "[$success]●[/]", False: "[$error]✗[/]", None: "[$warning]…[/]"}[self.healthy]
            health = f" {escape(f['health'])}" if f["health"] else ""
            parts.append(f"{escape(f['model'])} {dot}{health}")
            plain.append(f"{f['model']} {'●' if self.healthy else '✗' if self.healthy is False else '…'}"
                         f"{' ' + f['health'] if f['health'] else ''}")
        if f["sandbox"]:
            parts.append(f"[$success]{escape(f['sandbox'])}[/]" if self.sandboxed else escape(f["sandbox"]))
            plain.append(f["sandbox"])
        if f["memory"]:
            parts.append(escape(f["memory"]))
            plain.append(f["memory"])
        if f["mcp"]:
            failed = ", failed" in f["mcp"]
            parts.append(f"[b $warning]{escape(f['mcp'])}[/]" if failed else escape(f["mcp"]))
            plain.append(f["mcp"])
        if f["problems"]:
            parts.append(f"[b $warning]{escape(f['problems'])}[/]")
            plain.append(f["problems"])
        return parts, plain
