"""Colours the UI draws text in, taken from the current theme (never ANSI names, whose light-theme
mapping drew ExecutionResult #f7f7f7 on #fafafa), and the WCAG contrast ratio the tests hold them to."""

from __future__ import annotations

from rich.style import Style
from textual.color import Color
from textual.theme import Theme

# envelope type → (theme colour, bold); "muted" = the foreground blended toward the background
TYPE_COLOUR: dict[str, tuple[str, bool]] = {
    "UserInput": ("foreground", True), "TaskStarted": ("muted", False), "TaskSpec": ("primary", False),
    "SubTask": ("primary", False), "DispatchManifest": ("primary", False), "ExecutionResult": ("foreground", False),
    "CorrectionSignal": ("warning", False), "SubTaskOutcome": ("success", False), "ReplanRequest": ("secondary", False),
    "OutcomeSummary": ("success", False), "PlanDirective": ("secondary", True), "FinalResult": ("success", True),
    "Megram": ("accent", False), "ClarificationRequest": ("warning", True), "ConfirmationRequest": ("error", True),
    "LLMUsage": ("muted", False), "LLMDelta": ("muted", False), "AuditEvent": ("error", False),
    "AuditReport": ("muted", False),
    "TaskCancelled": ("error", True), "PerceiverReply": ("success", True), "ClarificationAnswer": ("foreground", True),
    "ConfirmationDecision": ("warning", False), "MegramWritten": ("accent", False),
    "ApprovalRecord": ("muted", False),
}
MUTED_BLEND = 0.3  # how far "muted" moves from the foreground toward the background


def luminance(c: Color) -> float:
    """WCAG 2.x relative luminance."""
    def chan(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = c.rgb
    return 0.2126 * chan(r) + 0.7152 * chan(g) + 0.0722 * chan(b)


def contrast(fg: Color, bg: Color) -> float:
    a, b = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def theme_colour(theme: Theme, name: str) -> Color:
    bg = Color.parse(theme.background or ("#121212" if theme.dark else "#fafafa"))
    fg = Color.parse(theme.foreground or ("#e0e0e0" if theme.dark else "#1c1c1c"))
    if name == "background":
        return bg
    if name == "foreground":
        return fg
    if name == "muted":
        return fg.blend(bg, MUTED_BLEND)
    value = getattr(theme, name, None)
    return Color.parse(value) if value else fg


_CACHE: dict[tuple[str, int], dict[str, Style]] = {}


def _styles(theme: Theme) -> dict[str, Style]:
    key = (theme.name, id(theme))
    out = _CACHE.get(key)
    if out is None:
        out = _CACHE[key] = {t: Style(color=theme_colour(theme, name).hex6, bold=bold)
                             for t, (name, bold) in TYPE_COLOUR.items()}
    return out


def type_style(theme: Theme, type_name: str) -> Style:
    return _styles(theme).get(type_name) or Style(color=theme_colour(theme, "foreground").hex6, bold=True)


def colour(theme: Theme, name: str) -> str:
    """A theme colour as #rrggbb for Rich markup (`[#5fd787]…`)."""
    return theme_colour(theme, name).hex6
