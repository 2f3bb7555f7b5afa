"""The help screen: every key with a readable name (Ctrl+O, not `ctrl+o`; ?, not `question_mark`),
the keys that live on widgets (Enter, ↑/↓, Ctrl+P), and the glossary of the main screen's terms."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from agentui.ui.glossary import GLOSSARY
from agentui.ui.markup import escape

_NAMES = {"question_mark": "?", "escape": "Esc", "enter": "Enter", "up": "↑", "down": "↓", "slash": "/",
          "space": "Space", "tab": "Tab", "pageup": "PgUp", "pagedown": "PgDn", "home": "Home", "end": "End"}

# keys handled by widgets or by Textual itself, so not in the app's bindings
EXTRA_KEYS = [
    ("Enter", "run the goal typed in the input; on a picked bus line, open its payload"),
    ("↑ / ↓", "in the input: previous / next goal; on the bus (after Ctrl+L): pick a line"),
    ("c", "on a picked bus line, an open payload, a Megram or a task in History: copy it to the clipboard"),
    ("Ctrl+C", "copy the selected text (select with the mouse)"),
    ("Ctrl+P", "the command palette: every action by name"),
    ("Tab", "in the input: take the grey completion (a / command, an @path); else to the result pane, "
            "where ↑ ↓ PgUp PgDn scroll (its title says what is out of sight)"),
    ("/", "in the input: /remember TEXT, /forget ID, /memory [FILTER], /audit, /tree, /settings, /login NAME, "
          "/clear, /help"),
    ("@", "in the input: @path attaches a workspace file (its text, bounded) or folder (its listing) to the goal"),
    ("g", "in Memory (Ctrl+O) and History (Ctrl+G): refresh the list"),
    ("o", "in History (Ctrl+G): continue the selected task's session — the next goal follows up on it"),
]


def key_name(key: str) -> str:
    """`ctrl+o` → `Ctrl+O`, `question_mark` → `?`, `f1` → `F1`, `escape,q` → `Esc / q`."""
    out = []
    for k in key.split(","):
        parts = k.strip().split("+")
        named = []
        for p in parts:
            if p in _NAMES:
                named.append(_NAMES[p])
            elif p in ("ctrl", "shift", "alt", "meta"):
                named.append(p.capitalize())
            elif len(p) == 1:
                named.append(p.upper() if len(parts) > 1 else p)
            elif p[0] == "f" and p[1:].isdigit():
                named.append(p.upper())
            else:
                named.append(p.replace("_", " "))
        out.append("+".join(named))
    return " / ".join(out)


def help_text(bindings: list[Binding]) -> str:
    seen: set[str] = set()
    rows = []
    for b in bindings:
        if not b.description or b.action in seen:
            continue
        seen.add(b.action)
        keys = key_name(b.key)
        rows.append((keys, b.description))
    rows.extend(EXTRA_KEYS)
    width = max(len(k) for k, _ in rows)
    keys = "\n".join(f"  [b]{escape(k):>{width}}[/b]  {escape(d)}" for k, d in rows)
    terms = "\n".join(f"  [b]{escape(t)}[/b]  {escape(d)}" for t, d in GLOSSARY.items())
    return ("[b]agentui — keys[/b]\n\n" + keys + "\n\n[b]What the screen shows[/b]\n\n" + terms
            + "\n\nThe top line: the workspace the tools act in, model@endpoint with its health, the sandbox, "
              "the memory's M/K/C/T counts. Under the bus: GGS's line, then the stage with its elapsed time "
              "and the task's clock, LLM calls, tokens in/out and tool calls. While a task runs, the result "
              "pane shows the executor's or R4b's reply as it is generated (\"live · R3 Executor is writing…\"); "
              "the task's result replaces it.")


class HelpScreen(Screen[None]):
    BINDINGS = [Binding("escape,q,f1", "app.pop_screen", "Back")]

    def compose(self) -> ComposeResult:
        # one line per key: a key's later bindings are its fallbacks (Esc with no task to abort)
        bindings: list[Binding] = []
        for b in self.app.BINDINGS:
            if isinstance(b, Binding) and all(b.key != seen.key for seen in bindings):
                bindings.append(b)
        with VerticalScroll():
            yield Static(help_text(bindings), id="help-text")
        yield Footer(compact=True)  # 80 columns: room for every key
