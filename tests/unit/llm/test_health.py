"""Endpoint health for the TUI header (#12): unknown → ok after a passing preflight → down, with
the one message (endpoint, model, what the server said, the fix), after an endpoint failure."""

from __future__ import annotations

import pytest

from agentui.config import Config
from agentui.llm import LLMHTTPError, LLMPool
from tests.fakellm import Reply


async def test_health_follows_preflight_and_failures(fakellm):
    cfg = Config.model_validate({"llm": {"base_url": fakellm.base_url, "model": "qwen2.5-coder:1.5b",
                                         "max_retries": 0}})
    pool = LLMPool(cfg)
    seen = []
    pool.on_infra_failure = seen.append
    try:
        assert [h["state"] for h in pool.health_report()] == ["unknown"]
        (r,) = await pool.preflight()
        assert r.ok and pool.health_report()[0]["state"] == "ok"
        fakellm.script("planner", [Reply.fault("model_not_found")])
        with pytest.raises(LLMHTTPError):
            await pool.for_role("planner").chat([{"role": "user", "content": "q"}])
        (h,) = pool.health_report()
        assert h["state"] == "down" and "ollama pull qwen2.5-coder:1.5b" in h["message"]
        assert fakellm.base_url in h["message"] and "fake-model" in h["message"]
        assert len(seen) == 1 and seen[0].kind == "model_not_found"
        fakellm.script("planner", [Reply.text("fine")])
        await pool.for_role("planner").chat([{"role": "user", "content": "q"}])
        assert pool.health_report()[0]["state"] == "ok"
    finally:
        await pool.aclose()
