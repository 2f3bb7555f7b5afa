"""Modal dialogs: R1's clarifying question, the safety gate's confirmation, payload viewer,
yes/no and one-line prompts. Each dismisses with its answer; nothing blocks the event loop."""

from __future__ import annotations

import json

from rich.markup import escape
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Input, Label, Static

from agentui.contracts import (
    ClarificationRequest,
    ConfirmationChoice,
    ConfirmationRequest,
    Envelope,
)


def steady_cursors(screen: Screen[object] | App[object]) -> None:
    """No blinking cursors when the app runs without animation (snapshots, benchmarks, STYLE §8)."""
    if getattr(screen.app, "spinner_animated", True) is False:
        for inp in screen.query(Input):
            inp.cursor_blink = False


class ClarifyModal(ModalScreen[str]):
    """R1 asks; an empty answer means "proceed with your best interpretation"."""

    BINDINGS = [Binding("escape", "proceed", "Proceed without answering")]

    def __init__(self, req: ClarificationRequest) -> None:
        super().__init__()
        self.req = req

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="modal clarify"):
            yield Label(f"[b]The Perceiver asks[/b] (round {self.req.round} of 2)")
            yield Static(escape(self.req.question), id="question")
            yield Input(placeholder="your answer — empty = proceed", id="answer")
            yield Label("[dim]Enter answers · Escape proceeds without an answer[/dim]")

    def on_mount(self) -> None:
        steady_cursors(self)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_proceed(self) -> None:
        self.dismiss("")


class ConfirmModal(ModalScreen[ConfirmationChoice]):
    """The safety gate: the exact command (control characters made visible), where it runs,
    what it writes and contacts, why it asks; approve once / for this task / this session / always for
    this project — the pattern an approval stores is in the button text — or deny (the default)."""

    BINDINGS = [
        Binding("o,a", "choose('approve')", "Once"),
        Binding("t", "choose('task')", "This task"),
        Binding("s", "choose('session')", "This session"),
        Binding("p", "choose('project')", "Always for this project"),
        Binding("escape", "choose('deny')", "Deny", key_display="esc"),
        Binding("d", "choose('deny')", "Deny", show=False),
    ]

    def __init__(self, req: ConfirmationRequest) -> None:
        super().__init__()
        self.req = req

    def compose(self) -> ComposeResult:
        from agentui.tools.answers import scope_label
        from agentui.tools.safety import sanitize

        req = self.req
        where = "inside the OS sandbox" if req.sandboxed else "without an OS sandbox"
        title = "Run OUTSIDE the sandbox?" if req.escalation else "Confirm"
        with Vertical(id="dialog", classes="modal confirm"):
            yield Label(f"[b]{title}[/b] {escape(sanitize(req.tool))} in {escape(sanitize(req.cwd or '.'))} "
                        f"({where})")
            yield Static(escape(sanitize(req.command)), id="command")
            lines = [f"• {escape(sanitize(r))}" for r in req.reasons]
            if req.writes:
                lines.append(f"writes: {escape(sanitize(', '.join(req.writes)))}")
            if req.network:
                lines.append(f"network: {escape(sanitize(', '.join(req.network)))}")
            yield Static("\n".join(lines), id="reasons")
            with Vertical(id="buttons"):  # one per line: the patterns in the labels can be long
                for scope in req.scopes or ["once"]:
                    key = {"once": "o", "task": "t", "session": "s", "project": "p"}[scope]
                    choice = "approve" if scope == "once" else scope
                    label = escape(sanitize(scope_label(scope, req.patterns)))
                    # one row each (compact): at 80×24 every choice, Deny included, fits the dialog
                    yield Button(f"{label} ({key})", id=choice, variant="warning" if scope == "once" else "default",
                                 classes="scope", compact=True)
                yield Button("Deny (d)", id="deny", variant="primary", compact=True)
        # its own footer, over the main screen's: it names what Esc does here (deny), not "Abort task"
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#deny", Button).focus()  # the safe default

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_choose(event.button.id or "deny")

    def action_choose(self, choice: str) -> None:
        offered = {"approve" if s == "once" else s for s in (self.req.scopes or ["once"])}
        self.dismiss(ConfirmationChoice(choice) if choice in offered else ConfirmationChoice.DENY)


class PayloadModal(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,enter", "close", "Close"), Binding("c", "copy", "Copy payload")]

    def __init__(self, env: Envelope) -> None:
        super().__init__()
        self.env = env

    def compose(self) -> ComposeResult:
        body = json.dumps(self.env.to_dict(), indent=2, ensure_ascii=False, sort_keys=True)
        with Vertical(id="dialog", classes="modal payload"):
            yield Label(f"[b]{escape(self.env.type)}[/b] {self.env.sender.value}→{self.env.receiver.value} "
                        f"[dim]{escape(self.env.id)} · c copies · Esc closes[/dim]")
            with VerticalScroll():
                # pygments costs ~50 ms of import: only when a payload is opened
                from rich.syntax import Syntax

                yield Static(Syntax(body, "json", word_wrap=True, theme="ansi_dark"))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        body = json.dumps(self.env.to_dict(), indent=2, ensure_ascii=False, sort_keys=True)
        self.app.copy_to_clipboard(body)
        self.notify(f"copied the {self.env.type} payload ({len(body)} characters)", timeout=3)


class YesNoModal(ModalScreen[bool]):
    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="modal yesno"):
            yield Static(escape(self.question))
            yield Label("[b]y[/b] yes · [b]n[/b] no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class PromptModal(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, placeholder: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="modal prompt"):
            yield Label(escape(self.title_text))
            yield Input(placeholder=self.placeholder)

    def on_mount(self) -> None:
        steady_cursors(self)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
