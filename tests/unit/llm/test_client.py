"""The LLM client against a real HTTP server (tests/fakellm)."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from pydantic import BaseModel

from agentui.config import Config, LLMConfig
from agentui.llm import (
    HttpBackend,
    LLMClient,
    LLMHTTPError,
    LLMNotConfigured,
    LLMParseError,
    LLMPool,
    LLMUnavailable,
    normalise_base_url,
    resolve_provider,
)
from tests.fakellm import FakeLLM, Reply


class Answer(BaseModel):
    answer: str
    n: int = 0


def fast_cfg(**kw) -> LLMConfig:
    base = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "max_retries": 2, "read_timeout_s": 5.0}
    base.update(kw)
    return LLMConfig(**base)


def client(fake: FakeLLM, role: str = "planner", usages: list | None = None, **kw) -> LLMClient:
    cfg = fast_cfg(**kw)
    return LLMClient(HttpBackend(fake.base_url, "m", None, cfg), role, cfg,
                     on_usage=(usages.append if usages is not None else None))


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("localhost:11434", "http://localhost:11434/v1"),
        ("http://localhost:11434/", "http://localhost:11434/v1"),
        ("http://h:1/v1", "http://h:1/v1"),
        ("http://h:1/v1/", "http://h:1/v1"),
        ("http://h:1/v1/chat/completions", "http://h:1/v1"),
        ("https://api.example.com/openai/v1/chat/completions/", "https://api.example.com/openai/v1"),
        ("https://g.example.com/v1beta/openai", "https://g.example.com/v1beta/openai"),
    ],
)
def test_normalise_base_url(given, expected):
    assert normalise_base_url(given) == expected


async def test_chat_sends_role_header_and_counts_tokens(fakellm):
    fakellm.script("planner", [Reply.text("hello")])
    usages: list = []
    res = await client(fakellm, usages=usages).chat([{"role": "user", "content": "hi"}])
    assert res.text == "hello"
    assert res.prompt_tokens >= 1 and res.completion_tokens >= 1
    assert fakellm.calls("planner")[0]["messages"][-1]["content"] == "hi"
    assert [u.role.value for u in usages] == ["planner"]
    assert usages[0].prompt_tokens == res.prompt_tokens


@pytest.mark.parametrize("fault", ["think", "fenced", "prose", "concatenated"])
async def test_structured_repairs_wrapped_json(fakellm, fault):
    fakellm.script("planner", [Reply.fault(fault, {"answer": "x", "n": 2})])
    usages: list = []
    got = await client(fakellm, usages=usages).structured([{"role": "user", "content": "q"}], Answer)
    assert got == Answer(answer="x", n=2)
    assert len(fakellm.calls()) == 1
    assert usages[-1].parse_repairs == 1


async def test_schema_sent_to_the_server_is_not_repeated_in_the_prompt(fakellm):
    """#13: a server sent the schema constrains the reply to it; the prompt says one line."""
    fakellm.script("planner", [Reply.json({"answer": "y"})])
    await client(fakellm).structured([{"role": "system", "content": "S"}, {"role": "user", "content": "q"}], Answer)
    req = fakellm.calls()[0]
    assert req["messages"][0]["content"] == "S\n\nReply with exactly one JSON object and nothing else."
    assert req["response_format"]["type"] == "json_schema"
    assert "answer" in req["response_format"]["json_schema"]["schema"]["properties"]
    assert "$defs" not in str(req["response_format"])


@pytest.mark.parametrize(
    ("rejected", "schema_in_prompt"),
    [
        ({"json_schema"}, False),  # json_object with a schema: the server has it
        ({"json_schema", "json_object_schema"}, True),  # json_object alone: only the prompt can say it
        ({"json_schema", "json_object_schema", "json_object"}, True),  # prompt only
    ],
)
async def test_schema_in_prompt_only_where_the_server_is_not_sent_it(rejected, schema_in_prompt):
    with FakeLLM(reject_response_format=rejected) as fake:
        fake.responder("planner", lambda _r: Reply.json({"answer": "a"}))
        c = client(fake)
        for _ in range(2):  # negotiated, then the remembered dialect
            await c.structured([{"role": "system", "content": "S"}, {"role": "user", "content": "q"}], Answer)
            last = fake.calls()[-1]["messages"][0]["content"]
            assert last.startswith("S\n\nReply with exactly one JSON object and nothing else")
            assert ('"answer"' in last) is schema_in_prompt


async def test_reask_after_an_invalid_reply_shows_the_schema_the_prompt_left_out(fakellm):
    """A server that takes the schema but does not enforce it: the re-ask names the fields."""
    fakellm.script("planner", [Reply.json({"reply": "y"}), Reply.json({"answer": "ok"})])
    got = await client(fakellm).structured([{"role": "user", "content": "q"}], Answer)
    assert got.answer == "ok"
    first, second = (c["messages"] for c in fakellm.calls())
    assert '"answer"' not in first[0]["content"]
    assert "not valid" in second[-1]["content"] and '"answer"' in second[-1]["content"]
    assert "JSON schema" in second[-1]["content"]


async def test_reask_carries_validation_error(fakellm):
    fakellm.script("planner", [Reply.json({"answer": 5, "n": "many"}), Reply.json({"answer": "ok", "n": 1})])
    usages: list = []
    got = await client(fakellm, usages=usages).structured([{"role": "user", "content": "q"}], Answer)
    assert got.answer == "ok"
    second = fakellm.calls()[1]["messages"]
    assert second[-2]["role"] == "assistant"
    assert "not valid" in second[-1]["content"] and "answer" in second[-1]["content"]
    assert sum(u.parse_repairs for u in usages) == 1


async def test_two_bad_replies_raise_parse_error_with_raw(fakellm):
    fakellm.script("planner", [Reply.fault("garbage"), Reply.fault("garbage")])
    with pytest.raises(LLMParseError) as e:
        await client(fakellm).structured([{"role": "user", "content": "q"}], Answer)
    assert "after a re-ask" in str(e.value)
    assert "comply" in e.value.raw


async def test_finish_reason_length_is_a_failure(fakellm):
    fakellm.script("planner", [Reply.fault("length", {"answer": "long"}), Reply.json({"answer": "short"})])
    got = await client(fakellm).structured([{"role": "user", "content": "q"}], Answer)
    assert got.answer == "short"
    assert "SHORT JSON" in fakellm.calls()[1]["messages"][-1]["content"]


async def test_retries_500_then_succeeds(fakellm):
    fakellm.script("planner", [Reply.fault("http500"), Reply.fault("http500"), Reply.text("ok")])
    res = await client(fakellm).chat([{"role": "user", "content": "q"}])
    assert res.text == "ok"
    assert len(fakellm.calls()) == 3


async def test_gives_up_after_max_retries(fakellm):
    fakellm.script("planner", [Reply.fault("http500")] * 3 + [Reply.text("never")])
    with pytest.raises(LLMUnavailable) as e:
        await client(fakellm).chat([{"role": "user", "content": "q"}])
    assert "gave up after 3 attempt" in str(e.value)
    assert fakellm.pending("planner") == 1


async def test_429_honours_retry_after(fakellm):
    fakellm.script("planner", [Reply.fault("http429", retry_after=0.3), Reply.text("ok")])
    sleeps: list[float] = []

    async def sleep(d: float) -> None:
        sleeps.append(d)

    cfg = fast_cfg(backoff_max_s=2.0)
    c = LLMClient(HttpBackend(fakellm.base_url, "m", None, cfg), "planner", cfg, sleep=sleep)
    assert (await c.chat([{"role": "user", "content": "q"}])).text == "ok"
    assert sleeps and sleeps[0] >= 0.3


async def test_4xx_is_not_retried(fakellm):
    fakellm.script("planner", [Reply.fault("http400"), Reply.text("never")])
    with pytest.raises(LLMHTTPError) as e:
        await client(fakellm).chat([{"role": "user", "content": "q"}])
    assert e.value.status == 400
    assert len(fakellm.calls()) == 1


async def test_hang_is_a_typed_error_after_retries_within_the_read_timeout(fakellm):
    fakellm.responder("planner", lambda _r: Reply.fault("hang"))
    t0 = time.monotonic()
    with pytest.raises(LLMUnavailable) as e:
        await client(fakellm, read_timeout_s=0.5, max_retries=1).chat([{"role": "user", "content": "q"}])
    assert time.monotonic() - t0 < 4
    assert "no answer within" in str(e.value) and len(fakellm.calls("planner")) == 2


async def test_slow_first_byte_within_timeout_is_fine(fakellm):
    fakellm.script("planner", [Reply.fault("slow", {"answer": "late"}, delay_s=0.3)])
    got = await client(fakellm).structured([{"role": "user", "content": "q"}], Answer)
    assert got.answer == "late"


async def test_closed_port_fails_fast_with_what_to_set():
    cfg = fast_cfg()
    c = LLMClient(HttpBackend(f"http://127.0.0.1:{closed_port()}", "m", None, cfg), "planner", cfg)
    t0 = time.monotonic()
    with pytest.raises(LLMUnavailable) as e:
        await c.chat([{"role": "user", "content": "q"}])
    assert time.monotonic() - t0 < 10
    assert "AGENTUI_BASE_URL" in str(e.value)


async def test_cancellation_interrupts_a_hanging_call(fakellm):
    fakellm.script("planner", [Reply.fault("hang")])
    task = asyncio.create_task(client(fakellm, read_timeout_s=30).chat([{"role": "user", "content": "q"}]))
    await asyncio.sleep(0.2)
    t0 = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - t0 < 1


@pytest.mark.parametrize(
    ("rejected", "expected_modes"),
    [
        (set(), ["json_schema"]),
        ({"json_schema"}, ["json_schema", "json_object_schema"]),
        ({"json_schema", "json_object_schema"}, ["json_schema", "json_object_schema", "json_object"]),
        ({"json_schema", "json_object_schema", "json_object"},
         ["json_schema", "json_object_schema", "json_object", None]),
    ],
)
async def test_response_format_negotiation_is_cached(rejected, expected_modes):
    with FakeLLM(reject_response_format=rejected) as fake:
        fake.responder("planner", lambda _r: Reply.json({"answer": "a"}))
        c = client(fake)
        await c.structured([{"role": "user", "content": "q"}], Answer)
        seen = []
        for r in fake.calls():
            rf = r.get("response_format")
            seen.append(None if rf is None else ("json_object_schema" if rf.get("schema") else rf["type"]))
        assert seen == expected_modes
        n = len(fake.calls())
        await c.structured([{"role": "user", "content": "q"}], Answer)
        assert len(fake.calls()) == n + 1  # the negotiated dialect is remembered


def test_pool_routes_roles_to_tiers_and_accounts_usage(fakellm):
    async def go():
        cfg = Config.model_validate({
            "llm": {"base_url": fakellm.base_url, "model": "shared", "max_retries": 0,
                    "tool": {"model": "small"}}})
        pool = LLMPool(cfg)
        fakellm.responder("*", lambda _r: Reply.text("x"))
        await pool.for_role("planner").chat([{"role": "user", "content": "a"}])
        await pool.for_role("executor").chat([{"role": "user", "content": "b"}])
        await pool.for_role("executor").chat([{"role": "user", "content": "c"}])
        totals = pool.totals()
        await pool.aclose()
        return totals

    totals = asyncio.run(go())
    assert [r["model"] for r in fakellm.calls()] == ["shared", "small", "small"]
    assert totals["llm_calls"] == 3
    assert totals["by_role"]["executor"]["calls"] == 2
    assert totals["prompt_tokens"] > 0


async def test_preflight_ok_and_closed_port():
    with FakeLLM() as fake:
        pool = LLMPool(Config.model_validate({"llm": {"base_url": fake.base_url}}))
        [res] = await pool.preflight()
        assert res.ok and res.models == ["fake-model"] and res.model == "fake-model"
        await pool.aclose()
    pool = LLMPool(Config.model_validate({"llm": {"base_url": f"http://127.0.0.1:{closed_port()}",
                                                  "max_retries": 0}}))
    t0 = time.monotonic()
    [res] = await pool.preflight(timeout_s=10)
    assert not res.ok and time.monotonic() - t0 < 10
    assert "AGENTUI_BASE_URL" in res.error
    await pool.aclose()


def test_resolve_provider_says_what_to_set(tmp_path):
    with pytest.raises(LLMNotConfigured) as e:
        resolve_provider(Config(), env={"AGENTUI_NO_AUTODETECT": "1"})
    assert "AGENTUI_BASE_URL" in str(e.value)
    with pytest.raises(LLMNotConfigured, match="AGENTUI_GGUF"):
        resolve_provider(Config.model_validate({"llm": {"provider": "local"}}), env={})
    p = resolve_provider(Config.model_validate({"llm": {"gguf": str(tmp_path / "m.gguf")}}), env={})
    assert p.kind == "local"
    assert resolve_provider(Config.model_validate({"llm": {"base_url": "h:1"}}), env={}).kind == "http"


def test_a_reset_connection_is_named_not_blank() -> None:
    """httpx raises ReadError("") on a reset: the message said "HTTP error talking to URL: " and
    nothing more (found by an outside tester, #12)."""
    import httpx

    from agentui.llm.http import http_why

    assert http_why(httpx.ReadError("")) == "the connection was reset or closed while reading the reply"
    assert http_why(httpx.RemoteProtocolError("")).startswith("the server closed the connection")
    assert http_why(httpx.ConnectError("boom")) == "ConnectError: boom"
    assert http_why(httpx.DecodingError("")) == "DecodingError"


def test_a_proxy_error_page_is_named_by_its_title_not_dumped() -> None:
    """A 502 from nginx in front of the model server: the message carried the raw HTML page
    (found by an outside tester, #12)."""
    from agentui.llm.http import _said

    page = ("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1>"
            "</center><hr><center>nginx/1.25.3</center></body></html>")
    assert _said(page) == "an HTML page: 502 Bad Gateway"
    assert "<" not in _said("<!DOCTYPE html><body><h1>Oops</h1></body>")
    assert _said('{"error": {"message": "model not found"}}') == "model not found"
