"""An MCP server's form (elicitation) as a modal: one row per field of the schema it sent — a
text or number input, a yes/no switch, a choice — and Accept, Decline or Cancel. The answer is
checked against the schema before it is sent; the core awaits it as a future."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Label, Select, Static, Switch

from agentui.mcp.elicit import Answer, Elicitation, Field, content_of
from agentui.ui.markup import escape
from agentui.ui.modals import steady_cursors


class ElicitModal(ModalScreen[Answer]):
    """Accept sends the values (only when every one fits its field); Decline says no; Esc cancels."""

    DEFAULT_CSS = """
    ElicitModal .elicit { border: thick $warning; }
    ElicitModal #elicit-fields { height: auto; max-height: 16; }
    ElicitModal .elicit-label { margin-top: 1; }
    ElicitModal .elicit-error { color: $error; height: auto; }
    ElicitModal .elicit-error.-empty { display: none; }
    ElicitModal #elicit-buttons { height: auto; margin-top: 1; }
    ElicitModal #elicit-buttons Button { margin-right: 2; }
    """
    BINDINGS = [
        Binding("escape", "answer('cancel')", "Cancel", key_display="esc"),
        Binding("ctrl+y", "answer('accept')", "Accept", priority=True),
        Binding("ctrl+n", "answer('decline')", "Decline", priority=True),
    ]

    def __init__(self, request: Elicitation) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        req = self.request
        with Vertical(id="dialog", classes="modal elicit"):
            yield Label(f"[b]MCP server '{escape(req.server)}' asks you[/b] [dim](what you send goes to that "
                        "server)[/dim]")
            yield Static(escape(req.message), id="elicit-message")
            with VerticalScroll(id="elicit-fields"):
                for f in req.fields:
                    yield Label(self._label(f), classes="elicit-label")
                    yield self._widget(f)
                    yield Static("", id=f"error-{f.name}", classes="elicit-error -empty")
            with Horizontal(id="elicit-buttons"):
                yield Button("Accept (ctrl+y)", id="accept", variant="primary", compact=True)
                yield Button("Decline (ctrl+n)", id="decline", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)
        yield Footer(compact=True, show_command_palette=False)

    @staticmethod
    def _label(f: Field) -> str:
        text = f"[b]{escape(f.label)}[/b]" + (" [dim](required)[/dim]" if f.required else "")
        if f.kind in ("number", "integer") and (f.minimum is not None or f.maximum is not None):
            low = "" if f.minimum is None else f"{f.minimum:g}"
            high = "" if f.maximum is None else f"{f.maximum:g}"
            text += f" [dim]{low}–{high}[/dim]"
        return text + (f"\n[dim]{escape(f.description)}[/dim]" if f.description else "")

    @staticmethod
    def _widget(f: Field) -> Any:
        wid = f"field-{f.name}"
        if f.kind == "boolean":
            return Switch(value=bool(f.default), id=wid)
        if f.kind == "enum":
            return Select([(label, value) for value, label in f.options], value=f.default or Select.NULL,
                          allow_blank=not f.required or f.default is None, prompt="choose…", id=wid, compact=True)
        default = "" if f.default is None else str(f.default)
        kind = {"integer": "integer", "number": "number"}.get(f.kind, "text")
        return Input(value=default, type=kind, placeholder=f.format or f.kind, id=wid, compact=True)

    def on_mount(self) -> None:
        steady_cursors(self)
        first = self.query("#elicit-fields Input, #elicit-fields Switch, #elicit-fields Select").first()
        first.focus()

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in self.request.fields:
            widget = self.query_one(f"#field-{f.name}")
            if isinstance(widget, Switch):
                out[f.name] = widget.value
            elif isinstance(widget, Select):
                out[f.name] = None if widget.is_blank() else widget.value
            elif isinstance(widget, Input):
                out[f.name] = widget.value
        return out

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_answer("accept")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_answer(event.button.id or "cancel")

    def action_answer(self, action: str) -> None:
        if action != "accept":
            self.dismiss(Answer("decline" if action == "decline" else "cancel"))
            return
        content, problems = content_of(self.request.fields, self.values())
        for f in self.request.fields:
            box = self.query_one(f"#error-{f.name}", Static)
            box.update(escape(problems.get(f.name, "")))
            box.set_class(f.name not in problems, "-empty")
        if problems:
            self.query_one(f"#field-{next(iter(problems))}").focus()
            return
        self.dismiss(Answer("accept", content))
