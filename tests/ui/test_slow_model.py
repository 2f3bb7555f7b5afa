"""A slow model is waited for, never a wall: the endpoint check gives up only on a server that is not
there (refused) or says no (401, 404). The fake LLM server is made deliberately slow: its tiny
completion answers after the check's window."""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import time
import tomllib

from textual.widgets import Input

from agentui.clock import FakeClock
from agentui.config import Config
from agentui.ids import SeededIds
from agentui.llm import LLMPool
from agentui.memory import InMemoryMemory
from agentui.ui.app import AgentApp
from agentui.ui.status import StatusBar
from agentui.ui.widgets import BusView, StageLine
from tests.fakellm import Reply
from tests.ui.test_app import SIZE, script_happy, type_task, wait_for

SLOW = 2.5  # seconds before the tiny completion's first byte; the window below is 0.5 s


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _slow(fake) -> None:
    fake.script("runtime", [Reply.fault("slow", delay_s=SLOW)])


async def test_a_slow_completion_is_waited_for_and_reported_as_slow(fakellm):
    _slow(fakellm)
    pool = LLMPool(Config.model_validate({"llm": {"base_url": fakellm.base_url, "max_retries": 0}}))
    told: list[tuple[float, str]] = []
    try:
        (r,) = await pool.preflight(timeout_s=0.5, patience_s=math.inf, waiting=lambda u, s, why: told.append((s, why)))
    finally:
        await pool.aclose()
    assert r.ok and r.slow, r
    assert told and told[0][0] >= 0.5 and told[0][1] == "loading / busy", told


async def test_a_slow_completion_past_the_patience_is_worded_slow_not_unreachable(fakellm):
    fakellm.script("runtime", [Reply.fault("slow", delay_s=5.0)])
    pool = LLMPool(Config.model_validate({"llm": {"base_url": fakellm.base_url, "max_retries": 0}}))
    try:
        (r,) = await pool.preflight(timeout_s=0.3, patience_s=0.7)
    finally:
        await pool.aclose()
    assert not r.ok and r.slow and "slow" in r.error and "loading" in r.error, r.error


async def test_a_dead_endpoint_still_fails_fast_even_with_patience():
    pool = LLMPool(Config.model_validate({"llm": {"base_url": f"http://127.0.0.1:{_closed_port()}/v1"}}))
    t0 = time.monotonic()
    try:
        (r,) = await pool.preflight(timeout_s=0.5, patience_s=math.inf)
    finally:
        await pool.aclose()
    assert not r.ok and not r.slow and time.monotonic() - t0 < 5, r
    assert "slow" not in r.error and "127.0.0.1" in r.error, r.error


def _app(fake, tmp_path, **kw) -> AgentApp:
    cfg = Config.model_validate({"llm": {"base_url": fake.base_url, "max_retries": 0},
                                 "pipeline": {"correction_budget": 0}, "ggs": {"time_budget_ms": 10**9},
                                 "memory": {"dreamer_interval_s": 0}})
    clock, ids = FakeClock(), SeededIds(3, readable=True)
    (tmp_path / "ws").mkdir(exist_ok=True)
    app = AgentApp(cfg, data_dir=tmp_path / "data", workspace=tmp_path / "ws", clock=clock, ids=ids, animate=False,
                   memory=InMemoryMemory(clock, ids), **kw)
    app.check_window_s = 0.5
    return app


async def test_the_ui_shows_waiting_for_the_model_and_runs_a_goal_typed_meanwhile(fakellm, tmp_path):
    _slow(fakellm)
    script_happy(fakellm)
    app = _app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.llm_waiting is not None)
        stage = app.query_one(StageLine).text
        assert "waiting for the model (loading / busy," in stage and "slow, not down" in stage, stage
        bar = app.query_one(StatusBar)
        assert bar.healthy is None and bar.fields["health"].startswith("waiting"), bar.fields
        assert "unreachable" not in bar.text
        await type_task(pilot, "count txt")  # typed while the model is still loading
        await wait_for(pilot, lambda: any(e.type == "FinalResult" for e in app.query_one(BusView).envs), steps=300)
        assert not app.llm_error and bar.healthy is True, bar.fields


async def test_enter_on_a_goal_checks_a_failed_endpoint_again(fakellm, tmp_path):
    fakellm.script("runtime", [Reply.fault("http401")])  # the first check is told no
    script_happy(fakellm)
    app = _app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None and app.llm_error)
        assert "Enter on a goal checks again" in str(app.query_one("#onboarding").render())
        n = len(fakellm.calls("runtime"))
        await type_task(pilot, "count txt")  # the server is fine now: Enter checks again and runs the goal
        await wait_for(pilot, lambda: any(e.type == "FinalResult" for e in app.query_one(BusView).envs), steps=300)
        assert len(fakellm.calls("runtime")) > n and not app.llm_error


async def test_settings_save_a_slow_endpoint_with_a_note(fakellm, tmp_path):
    from agentui.ui.settings import SettingsScreen

    fakellm.script("runtime", [Reply.fault("slow", delay_s=SLOW), Reply.fault("slow", delay_s=SLOW)])
    cfg_file = tmp_path / "config.toml"
    clock, ids = FakeClock(), SeededIds(3, readable=True)
    (tmp_path / "ws").mkdir()
    app = AgentApp(Config(), data_dir=tmp_path / "data", workspace=tmp_path / "ws", clock=clock, ids=ids,
                   animate=False, memory=InMemoryMemory(clock, ids), config_file=cfg_file)
    app.check_window_s = 0.5
    SettingsScreen.window_s = 0.5
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.runtime is not None)
            await pilot.press("ctrl+s")
            assert isinstance(app.screen, SettingsScreen)
            app.screen.query_one("#set-url", Input).value = fakellm.base_url
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen), steps=200)
            assert tomllib.loads(cfg_file.read_text())["llm"]["base_url"] == fakellm.base_url
            # the main screen keeps checking, visibly, until the model answers
            await wait_for(pilot, lambda: app.llm_waiting is not None, steps=200)
            # the first screen's "no LLM is configured" is stale now: it says what is happening instead
            await wait_for(pilot, lambda: "Waiting for the model" in str(app.query_one("#onboarding").render()),
                           steps=200)
            assert "no LLM is configured" not in str(app.query_one("#onboarding").render())
            await wait_for(pilot, lambda: app.runtime is not None and app.runtime.pool is not None, steps=300)
            assert not app.llm_error
    finally:
        SettingsScreen.window_s = 10.0


async def test_settings_status_line_is_visible_at_80x24(fakellm, tmp_path):
    """F5, Ctrl+S and Detect say what they did in a line that is on screen at 80×24."""
    app = _app(fakellm, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+s")
        status = app.screen.query_one("#set-status")
        await pilot.press("f5")
        await wait_for(pilot, lambda: "ok:" in str(status.render()))
        assert status.region.height >= 1 and status.region.bottom <= 23, status.region


def test_run_waits_for_a_slow_model_with_progress_on_stderr(tmp_path):
    """`agentui run` against a server whose tiny completion takes longer than the 10 s window:
    progress on stderr, then the task runs (exit 0), never exit 2."""
    from tests.fakellm import FakeLLM
    from tests.functional.test_run_cli import _script_happy

    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("x\n")
    with FakeLLM() as fake:
        fake.script("runtime", [Reply.fault("slow", delay_s=12.0)])
        _script_happy(fake)
        env = {**os.environ, "AGENTUI_BASE_URL": fake.base_url, "AGENTUI_MODEL": fake.model,
               "AGENTUI_NO_AUTODETECT": "1"}
        r = subprocess.run([sys.executable, "-m", "agentui.cli", "run", "--yes", "--workspace", str(tmp_path),
                            "--data-dir", str(tmp_path / "d"), "count the txt files"], env=env, text=True,
                           capture_output=True, timeout=120)
    assert "waiting for the model" in r.stderr and "slow, not down" in r.stderr, r.stderr
    assert r.returncode == 0, (r.returncode, r.stderr)


async def test_loading_an_in_process_model_is_not_counted_against_the_check():
    """A GGUF loaded in process (cold disk: seconds) is loaded before the check's clock starts."""
    import asyncio

    from agentui.llm.base import ChatResult

    class Cold:
        url, model, loaded = "local:tiny.gguf", "tiny", False

        async def warm(self) -> None:
            await asyncio.sleep(1.0)  # reading the model file
            self.loaded = True

        async def list_models(self, *, timeout_s: float) -> list[str]:
            return [self.model]

        async def complete(self, messages, **kw) -> ChatResult:  # noqa: ANN001
            assert self.loaded, "the completion ran before the model was loaded"
            return ChatResult(text="ok", finish_reason="stop", prompt_tokens=5, completion_tokens=1, latency_s=0.01,
                              model=self.model)

        async def aclose(self) -> None:
            return None

    told: list[str] = []
    pool = LLMPool(Config(), backend=Cold())
    (r,) = await pool.preflight(timeout_s=0.5, waiting=lambda u, s, why: told.append(why))
    assert r.ok and not r.slow and r.latency_s < 0.5, r
    assert told and set(told) == {"loading the model file"}
