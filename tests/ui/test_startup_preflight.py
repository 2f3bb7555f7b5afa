"""The TUI's startup check is the preflight `doctor` and `run` share (#12 item 5, #15): a model
list is not enough — the endpoint is healthy only once a tiny completion answered. Real app (Pilot),
the fake LLM over HTTP."""

from __future__ import annotations

from agentui.clock import FakeClock
from agentui.config import Config
from agentui.ids import SeededIds
from agentui.memory import InMemoryMemory
from agentui.ui.app import AgentApp
from agentui.ui.status import StatusBar
from tests.fakellm import Reply
from tests.ui.test_app import SIZE, wait_for


def _app(fake, tmp_path, model: str) -> AgentApp:
    cfg = Config.model_validate({"llm": {"base_url": fake.base_url, "model": model, "max_retries": 0},
                                 "memory": {"dreamer_interval_s": 0}})
    clock, ids = FakeClock(), SeededIds(3, readable=True)
    return AgentApp(cfg, data_dir=tmp_path / "data", workspace=tmp_path, clock=clock, ids=ids, animate=False,
                    memory=InMemoryMemory(clock, ids))  # no pool given: the app opens and checks its own


async def test_a_model_the_server_lists_but_cannot_run_is_not_healthy(fakellm, tmp_path):
    # /v1/models answers, the completion says the model was never pulled (Ollama's 404)
    fakellm.responder("runtime", lambda _r: Reply.fault("model_not_found"))
    app = _app(fakellm, tmp_path, "qwen2.5-coder:1.5b")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        assert fakellm.calls("runtime"), "the startup check sent no completion"
        bar = app.query_one(StatusBar)
        assert bar.healthy is False and "unreachable" in bar.fields["health"], bar.fields
        text = str(app.query_one("#onboarding").render())
        assert "No LLM available" in text and "qwen2.5-coder:1.5b" in text, text
        assert app.runtime.pool is None  # no task can start on it


async def test_a_completion_that_answers_marks_the_model_healthy(fakellm, tmp_path):
    app = _app(fakellm, tmp_path, "fake-model")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        calls = fakellm.calls("runtime")
        assert len(calls) == 1 and calls[0]["model"] == "fake-model" and calls[0]["max_tokens"] == 8
        bar = app.query_one(StatusBar)
        assert bar.healthy is True and bar.fields["health"].startswith("ok"), bar.fields
        assert not app.query_one("#onboarding").display
