"""≥ 1,000 generated malformed replies: each ends in a parsed value or a typed LLMError —
never a hang, never an unhandled exception (issue #2)."""

from __future__ import annotations

import asyncio
import json
import random
import threading

from pydantic import BaseModel

from agentui.config import LLMConfig
from agentui.llm import HttpBackend, LLMClient, LLMError
from tests.fakellm import Reply

N = 1200


class Item(BaseModel):
    name: str
    count: int
    tags: list[str] = []


def _valid(rng: random.Random) -> dict:
    return {"name": rng.choice(["a", "ß", "名前", "x\"y", "🎉", "{brace}"]),
            "count": rng.randint(-5, 10**6), "tags": [rng.choice("abc") for _ in range(rng.randint(0, 3))]}


def _mangle(rng: random.Random) -> Reply:
    obj = _valid(rng)
    s = json.dumps(obj, ensure_ascii=rng.random() < 0.5)
    kind = rng.randrange(16)
    if kind == 0:
        return Reply.text(s[: rng.randrange(len(s))])  # truncated anywhere
    if kind == 1:
        return Reply.text("".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(80))))
    if kind == 2:
        return Reply.text(f"<think>{s[:10]}</think>" * rng.randint(1, 3) + s)
    if kind == 3:
        return Reply.text(f"```json\n{s}\n```" + rng.choice(["", "\n```\n{", " trailing {"]))
    if kind == 4:
        return Reply.text(s + s[: rng.randrange(len(s))])  # concatenated, second cut
    if kind == 5:
        return Reply.text(json.dumps({"name": obj["name"]}))  # missing field
    if kind == 6:
        return Reply.text(json.dumps({**obj, "count": "lots"}))  # wrong type
    if kind == 7:
        return Reply.text("[" * rng.randint(1, 3000))  # deep nesting, unclosed
    if kind == 8:
        return Reply.text("{" + '"a":' * rng.randint(1, 50))
    if kind == 9:
        return Reply.fault("length", obj)
    if kind == 10:
        return Reply.fault(rng.choice(["http500", "http429", "http400", "drop", "not_openai", "empty"]))
    if kind == 11:
        return Reply.text(s.replace('"', "'"))  # python-ish quotes
    if kind == 12:
        return Reply.text("<think>" + s)  # unclosed think around the answer
    if kind == 13:
        return Reply.text(json.dumps([obj]))  # array instead of object
    if kind == 14:
        return Reply.text("\x00\x01" + s + "\udcff".encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
    return Reply.text(s)  # sometimes it is fine


async def test_fuzz_malformed_replies_end_typed(fakellm):
    rng = random.Random(20261122)
    lock = threading.Lock()

    def responder(_req: dict) -> Reply:
        with lock:
            return _mangle(rng)

    fakellm.responder("executor", responder)
    cfg = LLMConfig(max_retries=1, backoff_base_s=0.0, backoff_max_s=0.0, read_timeout_s=5.0)
    c = LLMClient(HttpBackend(fakellm.base_url, "m", None, cfg), "executor", cfg)
    parsed = typed = 0
    for _ in range(N):
        try:
            got = await asyncio.wait_for(c.structured([{"role": "user", "content": "go"}], Item), timeout=10)
        except LLMError:
            typed += 1
        else:
            assert isinstance(got, Item)
            parsed += 1
    await c.backend.aclose()
    assert parsed + typed == N
    assert parsed > 100 and typed > 100  # the generator really exercises both outcomes
