"""Modal dialogs: R1's clarifying question, the safety gate's confirmation, payload viewer,
yes/no and one-line prompts. Each dismisses with its answer; nothing blocks the event loop."""

from __future__ import annotations

import json

from rich.style import Style
from rich.text import Text
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
from agentui.ui.markup import escape


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
    what it writes and contacts, why it asks; for a file write, the change as a coloured unified
    diff that scrolls; approve once / for this task / this session / always for this project — the
    pattern an approval stores is in the button text — or deny (the default)."""

    BINDINGS = [
        Binding("o,a", "choose('approve')", "Once"),
        Binding("t", "choose('task')", "This task"),
        Binding("s", "choose('session')", "This session"),
        Binding("p", "choose('project')", "Always for this project"),
        Binding("pagedown,down,j", "scroll_diff(1)", "Scroll diff", key_display="pgdn"),
        Binding("pageup,up,k", "scroll_diff(-1)", "Diff up", show=False),
        Binding("escape", "choose('deny')", "Deny", key_display="esc"),
        Binding("d", "choose('deny')", "Deny", show=False),
    ]
    _SCOPE_OF_ACTION = {"task": "task", "session": "session", "project": "project"}

    def __init__(self, req: ConfirmationRequest) -> None:
        super().__init__()
        self.req = req

    def compose(self) -> ComposeResult:
        from agentui.tools.answers import scope_label
        from agentui.tools.safety import sanitize

        req = self.req
        where = "inside the OS sandbox" if req.sandboxed else "without an OS sandbox"
        title = "Run OUTSIDE the sandbox?" if req.escalation else "Confirm"
        # a diff, or a command of several lines, gets the whole screen's height, spent by `_fit`
        tall = req.change is not None or "\n" in req.command.strip()
        with Vertical(id="dialog", classes="modal confirm" + (" with-diff" if tall else "")):
            yield Label(f"[b]{title}[/b] {escape(sanitize(req.tool))} in {escape(sanitize(req.cwd or '.'))} "
                        f"({where})")
            command = escape(sanitize(req.command))
            if req.change is not None:
                command += f"  [dim]+{req.change.added} −{req.change.removed}" + (
                    " (a new file)" if req.change.new_file else "") + "[/dim]"
            with VerticalScroll(id="command-box"):  # a long command scrolls; the choices stay on screen
                yield Static(command, id="command")
            lines = [f"• {escape(sanitize(r))}" for r in req.reasons]
            if req.writes:
                lines.append(f"writes: {escape(sanitize(', '.join(req.writes)))}")
            if req.network:
                lines.append(f"network: {escape(sanitize(', '.join(req.network)))}")
            yield Static("\n".join(lines), id="reasons")
            if req.change is not None:  # right above the choices: what a yes would write
                with VerticalScroll(id="diff"):
                    yield Static(self._diff_text(req.change.diff), id="diff-text")
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

    def _diff_text(self, diff: str) -> Text:
        """The unified diff coloured from the theme: additions, removals, hunk headers."""
        from agentui.tools.safety import sanitize
        from agentui.ui.palette import theme_colour

        theme = self.app.current_theme
        style = {"+": Style(color=theme_colour(theme, "success").hex6),
                 "-": Style(color=theme_colour(theme, "error").hex6),
                 "@": Style(color=theme_colour(theme, "secondary").hex6),
                 "h": Style(bold=True)}
        text = Text(no_wrap=True, overflow="ellipsis")
        for i, line in enumerate(sanitize(diff).split("\n")):
            key = "h" if line.startswith(("+++ ", "--- ")) else line[:1]
            if i:
                text.append("\n")
            text.append(line, style.get(key, ""))
        return text

    def on_mount(self) -> None:
        self.query_one("#deny", Button).focus()  # the safe default
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """The command and the diff take the rows the rest leaves (the diff most of them): every
        choice stays on screen, at 80×24 too, and what does not fit scrolls."""
        req = self.req
        reasons = len(req.reasons) + bool(req.writes) + bool(req.network)
        # title, reasons, the diff's and the choices' top margins, the choices, the border, the footer
        fixed = 1 + reasons + (1 if req.change is not None else 0) + 1 + len(req.scopes or ["once"]) + 1 + 2 + 1
        height, width = self.app.size.height, self.app.size.width
        room = max(2, height - fixed - 1)
        text_width = max(20, min(110, width * 8 // 10) - 6)
        wanted = sum(max(1, -(-len(line) // text_width)) for line in req.command.split("\n"))
        box = self.query_one("#command-box", VerticalScroll)
        if req.change is None:
            box.styles.max_height = room if "\n" in req.command.strip() else None
            return
        command_rows = min(wanted + 1, max(2, room // 4))  # +1: the change's size follows the command
        box.styles.max_height = command_rows
        self.query_one("#diff").styles.max_height = max(2, min(height * 6 // 10, room - command_rows))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys for answers not offered, and the diff's keys without a diff, are off and unlisted."""
        if action == "scroll_diff":  # the diff, or else a command too long for its box
            return self.req.change is not None or "\n" in self.req.command.strip()
        if action == "choose" and parameters and parameters[0] in self._SCOPE_OF_ACTION:
            return self._SCOPE_OF_ACTION[str(parameters[0])] in (self.req.scopes or ["once"])
        return True

    def action_scroll_diff(self, direction: int) -> None:
        box = self.query_one("#diff" if self.req.change is not None else "#command-box", VerticalScroll)
        page = max(1, box.size.height - 1)
        box.scroll_relative(y=direction * page, animate=False)

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

    def _body(self) -> str:
        """The payload as shown and as copied: indented JSON, keys sorted."""
        return json.dumps(self.env.to_dict(), indent=2, ensure_ascii=False, sort_keys=True)

    def compose(self) -> ComposeResult:
        body = self._body()
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
        body = self._body()
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
