"""Modal dialogs: R1's clarifying question, the safety gate's confirmation, payload viewer,
yes/no and one-line prompts. Each dismisses with its answer; nothing blocks the event loop."""

from __future__ import annotations

import json

from rich.markup import escape
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Input, Label, Static

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
    """The safety gate: the exact command, why it was flagged, approve / deny / always."""

    BINDINGS = [
        Binding("a", "choose('approve')", "Approve"),
        Binding("d", "choose('deny')", "Deny"),
        Binding("l", "choose('always')", "Always for this task"),
        Binding("escape", "choose('deny')", "Deny"),
    ]

    def __init__(self, req: ConfirmationRequest) -> None:
        super().__init__()
        self.req = req

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="modal confirm"):
            yield Label(f"[b]Confirm[/b] {escape(self.req.tool)} in {escape(self.req.cwd or '.')}")
            yield Static(escape(self.req.command), id="command")
            yield Static("\n".join(f"• {escape(r)}" for r in self.req.reasons), id="reasons")
            with Horizontal(id="buttons"):
                yield Button("Approve (a)", id="approve", variant="warning")
                yield Button("Deny (d)", id="deny", variant="primary")
                yield Button("Always for this task (l)", id="always")

    def on_mount(self) -> None:
        self.query_one("#deny", Button).focus()  # the safe default

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_choose(event.button.id or "deny")

    def action_choose(self, choice: str) -> None:
        self.dismiss(ConfirmationChoice(choice))


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
