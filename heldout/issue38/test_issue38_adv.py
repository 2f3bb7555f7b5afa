"""Adversarial pilot tests for issue 38, written from the issue text (not from agentui's code).

Run one at a time: .venv/bin/python -m pytest -q -p no:cacheprovider tests/adversarial -k NAME
See RESULTS-issue38.md for the tmux walk-throughs and what each of these showed.
"""

from __future__ import annotations

from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.ui.test_app import make_app, type_task, wait_for

SIZE = (80, 24)


def _script(fake) -> None:
    fake.responder("perceiver", lambda _r: perceive("count lines"))
    fake.responder("planner", lambda _r: plan(["the count is given"], sub("wc -l notes.txt", "a number",
                                                                          tools=["shell"]),
                                                    checks=["wc -l notes.txt"]))
    fake.responder("executor", lambda r: call("shell", command="wc -l notes.txt") if len(r["messages"]) <= 2
                   else finish("7 notes.txt"))
    fake.responder("agent_validator", lambda _r: verdicts("pass", quote="7 notes.txt"))
    fake.responder("meta_validator", lambda _r: merge("7 notes.txt", "pass", summary="line count",
                                                      answer="notes.txt has 7 lines"))


def _ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "notes.txt").write_text("".join(f"line {i}\n" for i in range(7)))
    (ws / "my notes.txt").write_text("SPACED-CONTENT\n")
    (ws / ".env").write_text("API_KEY=supersecret123\n")
    return ws


def _perceiver_texts(fake) -> list[str]:
    return ["\n".join(str(m.get("content", "")) for m in c["messages"]) for c in fake.calls("perceiver")]


async def _run(app, pilot, fake, text: str) -> None:
    n = len(fake.calls("meta_validator"))
    await type_task(pilot, text)
    await wait_for(pilot, lambda: len(fake.calls("meta_validator")) > n and app.current is None, steps=400)


async def test_followup_sees_previous_answer(fakellm, tmp_path):
    """Item 3 (control): the second goal of a session sees the first one's answer."""
    _ws(tmp_path)
    _script(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await _run(app, pilot, fakellm, "how many lines does notes.txt have")
        await _run(app, pilot, fakellm, "and how many words?")
    assert "notes.txt has 7 lines" in _perceiver_texts(fakellm)[-1]


async def test_followup_survives_saving_settings(fakellm, tmp_path):
    """Items 1+3: saving Settings (same endpoint) must not silently end the session's follow-ups."""
    _ws(tmp_path)
    _script(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await _run(app, pilot, fakellm, "how many lines does notes.txt have")
        await pilot.press("ctrl+s")
        await pilot.pause(0.5)
        await pilot.press("ctrl+s")  # check + save, unchanged endpoint
        await wait_for(pilot, lambda: type(app.screen).__name__ != "SettingsScreen", steps=300)
        await wait_for(pilot, lambda: app.runtime is not None)
        await _run(app, pilot, fakellm, "and how many words?")
    assert "notes.txt has 7 lines" in _perceiver_texts(fakellm)[-1], _perceiver_texts(fakellm)[-1][-300:]


async def test_at_mention_completed_name_with_space_attaches(fakellm, tmp_path):
    """Item 4: Tab-completing `@my` to a file whose name has a space must attach that file."""
    _ws(tmp_path)
    _script(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        for ch in "lines in @my":
            await pilot.press("space" if ch == " " else ch)
        await pilot.press("tab")
        await pilot.pause(0.2)
        typed = app.query_one("#task").value
        await _run(app, pilot, fakellm, "")
    assert "SPACED-CONTENT" in _perceiver_texts(fakellm)[-1], (typed, _perceiver_texts(fakellm)[-1][-200:])


async def test_at_mention_of_secret_file_is_not_sent_unasked(fakellm, tmp_path):
    """Item 4 vs docs/safety.md (`.env` is a secret path: shell reads refused, read_file asks every
    time): `@.env` must not put the secret into the model's prompt without a person's yes."""
    _ws(tmp_path)
    _script(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await _run(app, pilot, fakellm, "how many lines in @.env")
    assert "supersecret123" not in _perceiver_texts(fakellm)[-1]
