"""A call's cost is read only where the endpoint reports it, and a streamed reply's usage chunk,
sent after the reply's JSON value is complete, is read within a bound (#40)."""

from __future__ import annotations

import time

import httpx
import pytest

from agentui.llm.http import reported_cost
from tests.fakellm import Reply
from tests.unit.llm.test_streaming import Answer, make, settled


@pytest.mark.parametrize("usage, headers, cost", [
    ({"cost": 0.25}, None, 0.25),
    ({"cost": 0}, None, 0.0),
    ({}, httpx.Headers({"x-litellm-response-cost": "0.0031"}), 0.0031),
    ({"prompt_tokens": 9}, None, None),  # no cost reported: none, never an estimate
    ({"cost": -1}, None, None),
    ({"cost": float("nan")}, None, None),
    ({"cost": True}, None, None),
    ({"cost": "a lot"}, httpx.Headers({"x-litellm-response-cost": "x"}), None),
    ({"cost": 5000.0}, None, None),  # not the cost of one call
])
def test_only_a_reported_cost_is_taken(usage, headers, cost) -> None:  # noqa: ANN001
    assert reported_cost(usage, headers) == cost


async def test_the_usage_chunk_after_a_complete_value_is_read(fakellm) -> None:
    fakellm.script("planner", [Reply.stream({"answer": "yes"}, cost=0.004)])
    usages: list = []
    got = await make(fakellm, usages).structured([{"role": "user", "content": "q"}], Answer)
    assert got.answer == "yes"
    [u] = usages
    assert u.cost_usd == 0.004 and u.completion_tokens == len('{"answer": "yes"}') // 4  # the server's count


async def test_a_model_still_generating_after_its_value_is_left_within_the_bound(fakellm) -> None:
    fakellm.script("planner", [Reply.stream({"answer": "yes"}, tail="long", chunk_delay_s=0.001)])
    usages: list = []
    started = time.monotonic()
    await make(fakellm, usages).structured([{"role": "user", "content": "q"}], Answer)
    assert time.monotonic() - started < 2
    (rec,) = await settled(fakellm, 1)
    assert rec["disconnected"] and rec["chunks"] < 60 and usages[0].cost_usd is None
