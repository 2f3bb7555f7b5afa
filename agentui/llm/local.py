"""The `local` provider: a GGUF run in-process by llama-cpp-python (optional extra `local`).

One model per path is loaded once (lazily, on first use) and shared by every role. Calls run in a
worker thread under a lock (llama.cpp contexts are not re-entrant); cancelling the awaiting task
stops generation at the next token through a stopping criterion. Structured output uses the
`{"type": "json_object", "schema": …}` dialect llama-cpp-python honours (DESIGN §4), so the schema
constrains decoding by grammar.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentui.config import LLMConfig
from agentui.llm.base import (
    EXPECT_JSON,
    ON_DELTA,
    ChatResult,
    LLMNotConfigured,
    LLMUnavailable,
    Message,
)
from agentui.llm.stream import ReplyGuard

_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask — taskset, a container's cpuset),
    not the machine's count: llama.cpp threads beyond them spin against each other."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS has no sched_getaffinity
        return max(1, os.cpu_count() or 2)


def _load(path: str, n_ctx: int) -> Any:
    with _MODELS_LOCK:
        if path in _MODELS:
            return _MODELS[path]
        try:
            from llama_cpp import Llama
        except ImportError as e:  # pragma: no cover - depends on the optional extra
            raise LLMNotConfigured(
                "the local provider needs llama-cpp-python: pip install 'agentui[local]' "
                "(make test-live installs it)"
            ) from e
        threads = usable_cpus()
        model = Llama(model_path=path, n_ctx=n_ctx, n_threads=threads, verbose=False, seed=0)
        _MODELS[path] = model
        return model


def _tell(sink: Callable[[str], None] | None, delta: str) -> None:
    if sink is not None:
        with contextlib.suppress(Exception):  # a broken watcher never breaks the call
            sink(delta)


class LocalLlamaBackend:
    """A ChatBackend over llama_cpp.Llama."""

    def __init__(self, gguf: str, cfg: LLMConfig, *, n_ctx: int = 4096) -> None:
        p = Path(gguf).expanduser()
        if not p.is_file():
            raise LLMNotConfigured(f"GGUF not found: {p} (set AGENTUI_GGUF to a .gguf file)")
        self.path = str(p.resolve())
        self.url = f"local:{p.name}"
        self.model = p.stem
        self.format_mode: str | None = "json_object_schema"
        self._cfg = cfg
        self._n_ctx = n_ctx
        self._lock = threading.Lock()

    def _llm(self) -> Any:
        return _load(self.path, self._n_ctx)

    @property
    def loaded(self) -> bool:
        """The GGUF is in memory already (it is loaded once per process)."""
        return self.path in _MODELS

    async def warm(self) -> None:
        """Load the GGUF in a worker thread: the preflight does this before its clock starts, so
        reading a large file from a cold disk never counts as the model failing to answer."""
        try:
            await asyncio.to_thread(self._llm)
        except LLMNotConfigured:
            raise
        except Exception as e:  # noqa: BLE001 - llama.cpp load errors of any kind
            raise LLMUnavailable(f"local model failed to load: {type(e).__name__}: {e}", url=self.url) from e

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        role: str,
        max_tokens: int,
        temperature: float,
        response_format: dict[str, Any] | None,
        timeout_s: float | None = None,
    ) -> ChatResult:
        rf = response_format
        if rf is not None and rf.get("type") == "json_schema":
            rf = {"type": "json_object", "schema": rf["json_schema"]["schema"]}
        stop = threading.Event()
        deadline = time.monotonic() + (timeout_s or self._cfg.call_deadline_s)
        # the same stop rules as a stream over HTTP: complete value, runaway, deadline
        guard = ReplyGuard(max_tokens, want_json=EXPECT_JSON.get())
        told = ON_DELTA.get()
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()  # the watcher runs on the loop, in the caller's context

        def tell(delta: str) -> None:
            # generation runs in a worker thread: hand each piece to the event loop
            with contextlib.suppress(RuntimeError):  # the loop closed under a cancelled call
                loop.call_soon_threadsafe(_tell, told, delta, context=ctx)

        def run() -> ChatResult:
            # streamed, so a cancelled caller (stop) or the deadline ends generation at the next token
            with self._lock:
                llm = self._llm()
                t0 = time.monotonic()
                finish: str | None = None
                cut: str | None = None
                for chunk in llm.create_chat_completion(
                    messages=list(messages), max_tokens=max_tokens, temperature=temperature,
                    response_format=rf, stream=True, seed=0,
                ):
                    choice = chunk["choices"][0]
                    delta = choice.get("delta", {}).get("content")
                    if choice.get("finish_reason"):
                        finish = choice["finish_reason"]
                    why = guard.feed(delta) if delta else None
                    if delta and told is not None:
                        tell(delta)
                    if why == "done":
                        finish = finish or "stop"
                        break
                    if why is not None:
                        finish, cut = "length", why
                        break
                    if stop.is_set() or time.monotonic() > deadline:
                        finish, cut = "length", "deadline"
                        break
                n = guard.tokens
                total = int(getattr(llm, "n_tokens", 0) or 0)
                return ChatResult(
                    text=guard.text, finish_reason=finish,
                    prompt_tokens=max(0, total - n), completion_tokens=n,
                    latency_s=time.monotonic() - t0, model=self.model, cut=cut,
                )

        task = asyncio.ensure_future(asyncio.to_thread(run))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            stop.set()
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=5)
            except BaseException:  # noqa: BLE001 - we are already cancelling
                pass
            raise
        except LLMNotConfigured:
            raise
        except Exception as e:  # noqa: BLE001 - llama.cpp errors of any kind are this call's failure
            raise LLMUnavailable(f"local model failed: {type(e).__name__}: {e}", role=role, url=self.url) from e

    async def list_models(self, *, timeout_s: float) -> list[str]:
        return [self.model]

    async def aclose(self) -> None:
        return None
