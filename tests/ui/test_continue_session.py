"""History reopens a past session to continue it: after a restart, `o` on a task in History makes
its turns this session's, so the next goal is planned as a follow-up ("Earlier in this session")."""

from __future__ import annotations

from agentui.ui.sessions import HistoryScreen
from agentui.ui.widgets import ResultPanel
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.ui.test_app import SIZE, make_app, script_happy, type_task, wait_for


def script_follow_up(fake) -> None:
    fake.script("perceiver", [perceive("count the words of the txt files")])
    fake.script("planner", [plan(["the count is given"], sub("count words", "a number", tools=["shell"]),
                                 checks=["echo 5"])])
    fake.script("executor", [call("shell", command="echo 5"), finish("5")])
    fake.script("agent_validator", [verdicts("pass", quote="5")])
    fake.script("meta_validator", [merge("5", "pass", summary="5 words")])


def planner_prompt(fake) -> str:
    return "\n".join(m["content"] for m in fake.calls("planner")[-1]["messages"])


async def test_o_in_history_continues_a_past_session_after_a_restart(fakellm, tmp_path):
    script_happy(fakellm)
    first = make_app(fakellm, tmp_path)
    async with first.run_test(size=SIZE) as pilot:  # yesterday's session
        await wait_for(pilot, lambda: first.runtime is not None)
        await type_task(pilot, "count txt")
        await wait_for(pilot, lambda: first.current is None)
        assert first.runtime.history == ["count txt → answer: 2"]

    script_follow_up(fakellm)
    app = make_app(fakellm, tmp_path)  # a new session on the same data dir: no turns of its own
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        assert app.runtime.history == []
        await pilot.press("ctrl+g")
        scr = app.screen
        assert isinstance(scr, HistoryScreen)
        await wait_for(pilot, lambda: scr.records)
        assert "o continues its session" in str(scr.query_one("#hist-detail").render())
        await pilot.press("o")
        await wait_for(pilot, lambda: app.screen is app.screen_stack[0])
        assert app.runtime.history == ["count txt → answer: 2"]
        assert "count txt → answer: 2" in app.query_one(ResultPanel).copy_text
        assert app.focused is app.query_one("#task")
        await type_task(pilot, "and the words?")
        await wait_for(pilot, lambda: app.current is None)
        prompt = planner_prompt(fakellm)
        assert "Earlier in this session:\n- count txt → answer: 2" in prompt, prompt
        assert app.runtime.history == ["count txt → answer: 2", "and the words? → answer: 5"]


async def test_without_continuing_the_next_goal_is_a_new_session(fakellm, tmp_path):
    script_happy(fakellm)
    first = make_app(fakellm, tmp_path)
    async with first.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: first.runtime is not None)
        await type_task(pilot, "count txt")
        await wait_for(pilot, lambda: first.current is None)
    script_follow_up(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "and the words?")
        await wait_for(pilot, lambda: app.current is None)
        assert "Earlier in this session" not in planner_prompt(fakellm)


async def test_saving_settings_keeps_the_session_turns(fakellm, tmp_path):
    # Settings applies by restarting the runtime; the user's conversation must survive it, even
    # when nothing was changed (Ctrl+S twice on an unchanged endpoint)
    from agentui.ui.settings import SettingsScreen

    script_happy(fakellm)
    app = make_app(fakellm, tmp_path, config_file=tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "count txt")
        await wait_for(pilot, lambda: app.current is None)
        before = app.runtime
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SettingsScreen)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen), steps=300)
        await wait_for(pilot, lambda: app.runtime is not None and app.runtime is not before
                       and app.runtime.started, steps=300)
        assert app.runtime.history == ["count txt → answer: 2"]
        script_follow_up(fakellm)
        await type_task(pilot, "and the words?")
        await wait_for(pilot, lambda: app.current is None and len(fakellm.calls("planner")) == 2)
        await wait_for(pilot, lambda: app.current is None)
        perceived = "\n".join(m["content"] for m in fakellm.calls("perceiver")[-1]["messages"])
        assert "Earlier in this session:\n- count txt → answer: 2" in perceived, perceived
        prompt = planner_prompt(fakellm)
        assert "Earlier in this session:\n- count txt → answer: 2" in prompt, prompt
