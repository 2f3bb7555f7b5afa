"""Text shown through Textual's markup (Static, Label, notifications): every `[` escaped.

Rich's and Textual's own `escape` only escape what looks like a lowercase tag, while Textual's
parser takes `[FILTER]` or `[TODO]` as a tag too, and the text silently loses it. A backslash
before each `[` keeps any text whole (tested on random text with brackets and backslashes).
Rich-rendered text (RichLog with markup, `Text.from_markup`) keeps `rich.markup.escape`.
"""

from __future__ import annotations


def escape(text: str) -> str:
    return text.replace("[", "\\[")
