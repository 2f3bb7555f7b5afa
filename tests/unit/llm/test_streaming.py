"""Streamed replies over the fake server (#12): runaways cut within the budget, idle timeout vs a
slow-but-alive stream, the deadline, non-streaming servers, and the connection really closed."""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import BaseModel

from agentui.config import LLMConfig
from agentui.llm import HttpBackend, LLMClient, LLMParseError, LLMUnavailable
from agentui.llm.stream import ReplyGuard, looping
from tests.fakellm import FakeLLM, Reply

PLAN_HEAD = '{"task_criteria": ["x"], "subtasks": [{"intent": "y", "tools": ["glob", '


class Answer(BaseModel):
    answer: str
    n: int = 0


def make(fake: FakeLLM, usages: list | None = None, role: str = "planner", **kw) -> LLMClient:
    base = {"backoff_base_s": 0.01, "backoff_max_s": 0.02, "max_retries": 1, "read_timeout_s": 5.0,
            "idle_timeout_s": 1.0, "call_deadline_s": 20.0, "idle_wait_s": 5.0}
    cfg = LLMConfig(**{**base, **kw})
    return LLMClient(HttpBackend(fake.base_url, "m", None, cfg), role, cfg,
                     on_usage=usages.append if usages is not None else None)


async def settled(fake: FakeLLM, n: int, timeout: float = 5.0) -> list[dict]:
    """The server's records of its first `n` streams, once each has ended."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if len(fake.streams) >= n and all(s["t_end"] for s in fake.streams[:n]):
            break
        await asyncio.sleep(0.02)
    return fake.streams[:n]


async def test_a_complete_value_closes_the_stream_at_once(fakellm):
    """The reply is done when its JSON value closes: whatever the server would send after it is
    never read, and the server sees the client hang up."""
    fakellm.script("planner", [Reply.stream({"answer": "yes"}, tail="long", chunk_delay_s=0.001)])
    c = make(fakellm)
    got = await c.structured([{"role": "user", "content": "q"}], Answer)
    assert got.answer == "yes"
    (rec,) = await settled(fakellm, 1)
    assert rec["disconnected"] and not rec["done"] and rec["chunks"] < 60
    assert fakellm.calls("planner")[0]["stream"] is True


@pytest.mark.parametrize("tail", ["whitespace", "loop", "long"])
async def test_runaway_is_cut_within_the_budget_and_counted(fakellm, tail):
    fakellm.responder("planner", lambda _r: Reply.stream(PLAN_HEAD, tail=tail, chunk_delay_s=0.001))
    usages: list = []
    c = make(fakellm, usages)
    with pytest.raises(LLMParseError) as e:  # (no wall-clock bound: the chunk counts below prove the cut)
        await c.structured([{"role": "user", "content": "q"}], Answer, max_tokens=300)
    expected = {"whitespace": "runaway:whitespace", "loop": "runaway:loop", "long": "runaway:budget"}[tail]
    assert e.value.cut == expected
    recs = await settled(fakellm, 2)
    assert all(r["disconnected"] and not r["done"] for r in recs)
    assert all(r["chunks"] <= 300 + 60 for r in recs)  # cut within the budget (+ pipelining)
    assert [u.failure for u in usages] == ["output", "output"] and all(u.cut == expected for u in usages)
    assert all(u.completion_tokens <= 301 for u in usages)


async def test_a_re_ask_starts_only_after_the_previous_connection_closed(fakellm):
    fakellm.script("planner", [Reply.stream(PLAN_HEAD, tail="loop", chunk_delay_s=0.002),
                               Reply.json({"answer": "ok"})])
    c = make(fakellm)
    assert (await c.structured([{"role": "user", "content": "q"}], Answer)).answer == "ok"
    (first,) = await settled(fakellm, 1)
    second_asked = fakellm.calls("planner")[1]["_t"]
    assert first["disconnected"] and first["t_end"] <= second_asked + 0.05


async def test_slow_but_alive_stream_is_never_timed_out(fakellm):
    """Tokens 0.3 s apart for ~4 s against a 1 s idle timeout: alive, so it completes."""
    content = '{"answer": "' + "s" * 40 + '"}'
    fakellm.script("planner", [Reply.stream(content, chunk_delay_s=0.3)])
    got = await make(fakellm).structured([{"role": "user", "content": "q"}], Answer)
    assert got.answer == "s" * 40


async def test_idle_stream_times_out_then_waits_for_an_idle_endpoint(tmp_path):
    """Tokens stop (the connection stays open): the idle timeout fires, the client hangs up, and
    before asking again it waits until the single-slot server answers a one-token completion —
    the re-ask never queues behind the abandoned generation."""
    with FakeLLM(single_slot=True) as fake:
        fake.script("planner", [Reply.stream('{"answer": "stuck', tail="idle", linger_s=1.0),
                                Reply.json({"answer": "fresh"})])
        c = make(fake)
        t0 = time.monotonic()
        got = await c.structured([{"role": "user", "content": "q"}], Answer)
        assert got.answer == "fresh"
        assert 1.0 <= time.monotonic() - t0 < 8
        (orphan,) = await settled(fake, 1)
        probes = fake.calls("runtime")
        assert orphan["disconnected"] and probes and probes[0]["max_tokens"] == 1
        assert fake.calls("planner")[1]["_t"] >= orphan["t_end"] - 0.05  # after the slot freed
        assert c.backend.idle_checks == 1


async def test_endpoint_that_stays_busy_is_an_endpoint_failure(tmp_path):
    with FakeLLM(single_slot=True) as fake:
        fake.script("planner", [Reply.stream('{"answer": "x', tail="idle", linger_s=30.0)])
        c = make(fake, idle_wait_s=1.0)
        t0 = time.monotonic()
        with pytest.raises(LLMUnavailable) as e:
            await c.structured([{"role": "user", "content": "q"}], Answer)
        assert time.monotonic() - t0 < 6 and "still busy" in str(e.value)


async def test_deadline_cuts_a_reply_that_is_still_flowing(fakellm):
    fakellm.responder("planner", lambda _r: Reply.stream(
        '{"answer": "' + " ".join(f"w{i}" for i in range(2000)) + '"}', chunk_delay_s=0.01))
    usages: list = []
    c = make(fakellm, usages, call_deadline_s=1.0)
    with pytest.raises(LLMParseError) as e:
        await c.structured([{"role": "user", "content": "q"}], Answer, max_tokens=5000)
    assert e.value.cut == "deadline"
    assert all(r["disconnected"] for r in await settled(fakellm, 2))


@pytest.mark.parametrize("mode", ["ignore", "reject"])
async def test_non_streaming_server_works_and_is_remembered(mode):
    with FakeLLM(stream=mode) as fake:
        fake.responder("planner", lambda _r: Reply.json({"answer": "plain"}))
        c = make(fake)
        for _ in range(2):
            assert (await c.structured([{"role": "user", "content": "q"}], Answer)).answer == "plain"
        flags = [r.get("stream") for r in fake.calls("planner")]
        assert flags[-1] is False and c.backend.streams is False
        assert flags == ([True, False] if mode == "ignore" else [True, False, False])


async def test_non_streaming_runaway_is_a_length_parse_failure(tmp_path):
    with FakeLLM(stream="ignore") as fake:
        fake.responder("planner", lambda _r: Reply.stream(PLAN_HEAD, tail="loop"))
        usages: list = []
        with pytest.raises(LLMParseError) as e:
            await make(fake, usages).structured([{"role": "user", "content": "q"}], Answer, max_tokens=200)
        assert e.value.cut == "length" and [u.failure for u in usages] == ["output", "output"]


def test_guard_rules():
    g = ReplyGuard(1000)
    assert g.feed("<think>{not json}</think> ") is None
    assert g.feed('{"a": "}{"') is None and g.feed(', "b": [1, 2]}') == "done"
    assert looping("x" + '"glob", "read_file", ' * 20) and not looping("abcdefghij" * 3 + "k" * 10)
    g = ReplyGuard(1000)
    assert [g.feed(" ") for _ in range(159)][-1] is None and g.feed(" ") == "runaway:whitespace"


async def test_one_call_in_flight_per_endpoint_by_default(fakellm):
    """llama-cpp-python's server ends a running stream when another request arrives (#12): two
    roles asking at once must reach the endpoint one after the other."""
    for role in ("executor", "agent_validator"):
        fakellm.script(role, [Reply.stream({"answer": role}, chunk_delay_s=0.01)])
    cfg = LLMConfig(backoff_base_s=0.01, backoff_max_s=0.02, max_retries=1, read_timeout_s=5.0,
                    idle_timeout_s=1.0, call_deadline_s=20.0)
    backend = HttpBackend(fakellm.base_url, "m", None, cfg)
    a, b = (LLMClient(backend, r, cfg) for r in ("executor", "agent_validator"))
    got = await asyncio.gather(a.structured([{"role": "user", "content": "q"}], Answer),
                               b.structured([{"role": "user", "content": "q"}], Answer))
    assert [g.answer for g in got] == ["executor", "agent_validator"]
    first, second = sorted(await settled(fakellm, 2), key=lambda s: s["t_start"])
    assert second["t_start"] >= first["t_end"] - 0.005


async def test_a_stream_ended_before_any_token_is_asked_again(fakellm):
    """An empty stream with no finish reason is an interrupted call, not a model-output failure."""
    fakellm.script("planner", [Reply.stream("", finish_reason=None), Reply.stream({"answer": "ok"})])
    usages: list = []
    got = await make(fakellm, usages).structured([{"role": "user", "content": "q"}], Answer)
    assert got.answer == "ok" and len(fakellm.calls("planner")) == 2
    assert [u.failure for u in usages] == [None] and usages[0].parse_repairs == 0


async def test_cancelled_plain_completion_waits_for_idle_before_the_next_call():
    """A non-streaming server keeps generating a reply whose client left (cancelled by Esc or a
    fan-in timeout): the next call first probes that the endpoint is idle, never stacking on it."""
    with FakeLLM(stream="ignore") as fake:
        fake.script("planner", [Reply.fault("slow", {"answer": "late"}, delay_s=2.0),
                                Reply.json({"answer": "next"})])
        c = make(fake)
        call = asyncio.create_task(c.structured([{"role": "user", "content": "q"}], Answer))
        while not fake.calls("planner"):
            await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        got = await c.structured([{"role": "user", "content": "q"}], Answer)
        assert got.answer == "next"
        probes = fake.calls("runtime")
        assert c.backend.idle_checks == 1 and probes and probes[0]["max_tokens"] == 1
        assert probes[0]["_t"] < fake.calls("planner")[1]["_t"]  # probed before asking again


# -- watching the text as it is generated -----------------------------------------------------------


def watcher() -> tuple[list[tuple[str, str, str]], object]:
    seen: list[tuple[str, str, str]] = []
    return seen, lambda role, _call, what, text: seen.append((role, what, text))


async def test_a_watcher_sees_every_piece_in_order_and_the_result_is_unchanged(fakellm):
    reply = {"answer": "forty-two is the answer", "n": 42}
    fakellm.script("executor", [Reply.stream(reply, chunk_delay_s=0.002), Reply.stream(reply, chunk_delay_s=0.002)])
    plain_usage: list = []
    plain = await make(fakellm, plain_usage, role="executor").structured([{"role": "user", "content": "q"}], Answer)
    usages: list = []
    c = make(fakellm, usages, role="executor")
    seen, c.on_delta = watcher()
    got = await c.structured([{"role": "user", "content": "q"}], Answer)
    assert got == plain
    assert [(u.prompt_tokens, u.completion_tokens, u.ok) for u in usages] == \
        [(u.prompt_tokens, u.completion_tokens, u.ok) for u in plain_usage]
    whats = [w for _r, w, _t in seen]
    assert whats[0] == "start" and whats[-1] == "end" and set(whats[1:-1]) == {"delta"}
    pieces = [t for _r, w, t in seen if w == "delta"]
    assert len(pieces) > 5 and all(r == "executor" for r, _w, _t in seen)
    assert "".join(pieces) == '{"answer": "forty-two is the answer", "n": 42}'


async def test_each_attempt_starts_afresh_for_the_watcher(fakellm):
    fakellm.script("executor", [Reply.fault("http500"), Reply.stream({"answer": "ok"})])
    c = make(fakellm, role="executor")
    seen: list = []
    calls: list[int] = []
    c.on_delta = lambda role, call, what, text: (seen.append((role, what, text)), calls.append(call))
    assert (await c.structured([{"role": "user", "content": "q"}], Answer)).answer == "ok"
    whats = [w for _r, w, _t in seen]
    assert whats[:3] == ["start", "end", "start"] and whats[-1] == "end"
    assert calls[0] == calls[1] != calls[2]  # each attempt is a call of its own
    assert "".join(t for _r, w, t in seen if w == "delta") == '{"answer": "ok"}'


async def test_a_server_that_does_not_stream_still_answers_and_tells_no_pieces():
    with FakeLLM(stream="ignore") as fake:
        fake.responder("executor", lambda _r: Reply.json({"answer": "plain"}))
        c = make(fake, role="executor")
        seen, c.on_delta = watcher()
        assert (await c.structured([{"role": "user", "content": "q"}], Answer)).answer == "plain"
        assert [w for _r, w, _t in seen] == ["start", "end"]


async def test_a_broken_watcher_never_breaks_the_call(fakellm):
    fakellm.script("executor", [Reply.stream({"answer": "still"})])
    c = make(fakellm, role="executor")

    def broken(*_a) -> None:
        raise RuntimeError("display gone")

    c.on_delta = broken
    assert (await c.structured([{"role": "user", "content": "q"}], Answer)).answer == "still"
