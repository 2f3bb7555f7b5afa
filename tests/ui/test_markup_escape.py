"""Text shown through Textual's markup keeps every bracket: `[FILTER]`, `[TODO]`, `[/]` and
backslashes survive (Rich's escape lets an uppercase tag vanish, and `[/]` can raise)."""

from __future__ import annotations

import random

from rich.markup import escape as rich_escape
from textual.content import Content

from agentui.ui.markup import escape


def test_every_text_comes_back_whole() -> None:
    rng = random.Random(7)
    texts = ["/memory [FILTER]", "rename [OLD] to [NEW]", "[b]not bold[/b]", "[/]", "a\\[b", "end\\", "x[1]=2"]
    texts += ["".join(rng.choice("ab[]\\/@=$# ") for _ in range(rng.randint(0, 14))) for _ in range(3000)]
    assert [t for t in texts if Content.from_markup(escape(t)).plain != t] == []


def test_rich_escape_loses_an_uppercase_tag() -> None:  # why this module exists
    assert Content.from_markup(rich_escape("/memory [FILTER], /audit")).plain == "/memory , /audit"


async def test_the_help_command_shows_its_bracketed_arguments(fakellm, tmp_path) -> None:
    from tests.ui.test_app import SIZE, make_app, type_task, wait_for

    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "/help")
        await wait_for(pilot, lambda: any("/memory [FILTER]" in n.message for n in app._notifications))
        [note] = [n for n in app._notifications if "/memory [FILTER]" in n.message]
        assert note.markup is False  # shown as written: markup would take [FILTER] for a tag
