"""The in-process backend tells a watcher each piece of the reply as llama.cpp generates it, on the
event loop (generation runs in a worker thread), before the call returns — and returns the same
result as without a watcher. llama_cpp itself is an optional extra: a stand-in with its streaming
`create_chat_completion` takes the loaded model's place (the live tests run the real one)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from agentui.config import LLMConfig
from agentui.llm import LLMClient
from agentui.llm import local as local_mod
from agentui.llm.local import LocalLlamaBackend

PIECES = ['{"ans', 'wer": ', '"seven', ' lines"', ', "n": 7}']


class Answer(BaseModel):
    answer: str
    n: int = 0


class StreamingLlama:
    """What llama_cpp.Llama's chat completion yields with stream=True (chunk dicts)."""

    n_tokens = 40

    def __init__(self) -> None:
        self.threads: list[str] = []

    def create_chat_completion(self, **kw):  # noqa: ANN003, ANN201
        assert kw["stream"] is True
        for piece in PIECES:
            self.threads.append(threading.current_thread().name)
            yield {"choices": [{"delta": {"content": piece}, "finish_reason": None}]}
        yield {"choices": [{"delta": {}, "finish_reason": "stop"}]}


@pytest.fixture
def backend(tmp_path: Path):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    cfg = LLMConfig()
    b = LocalLlamaBackend(str(gguf), cfg)
    model = StreamingLlama()
    local_mod._MODELS[b.path] = model
    yield b, cfg, model
    local_mod._MODELS.pop(b.path, None)


async def test_local_pieces_reach_the_watcher_on_the_loop_before_the_result(backend):
    b, cfg, model = backend
    plain = await LLMClient(b, "executor", cfg).structured([{"role": "user", "content": "q"}], Answer)
    seen: list[tuple[str, str, str]] = []
    where: list[str] = []

    def watch(role: str, _call: int, what: str, text: str) -> None:
        seen.append((role, what, text))
        where.append(threading.current_thread().name)

    c = LLMClient(b, "executor", cfg)
    c.on_delta = watch
    got = await c.structured([{"role": "user", "content": "q"}], Answer)
    assert got == plain == Answer(answer="seven lines", n=7)
    assert [t for _r, w, t in seen if w == "delta"] == PIECES
    assert [w for _r, w, _t in seen][0] == "start" and seen[-1][1] == "end"  # every piece before the end
    assert set(where) == {threading.main_thread().name}  # on the loop, never on llama.cpp's thread
    assert threading.main_thread().name not in model.threads
