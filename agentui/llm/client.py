"""One async client for any OpenAI-compatible `/v1/chat/completions` endpoint (DESIGN §4).

Layers, bottom up:

* a *backend* sends one chat request and returns a :class:`ChatResult` — :class:`HttpBackend`
  (httpx) or the in-process llama.cpp backend in :mod:`agentui.llm.local`;
* :class:`LLMClient` is what a role holds: retries with backoff and jitter (connect errors, 429,
  5xx — never other 4xx), cancellation, token/latency accounting, and :meth:`LLMClient.structured`
  — response_format negotiation, schema in the prompt, JSON extraction, pydantic validation and
  one re-ask carrying the error;
* :class:`LLMPool` builds one client per role from the config's tiers and keeps usage by role.

The pieces live in :mod:`agentui.llm.base` (errors, types), :mod:`agentui.llm.http`,
:mod:`agentui.llm.structured` and :mod:`agentui.llm.pool`; this module is the client itself.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agentui.config import LLMConfig
from agentui.contracts import LLMUsage, Role
from agentui.llm.base import (
    EXPECT_JSON,
    ON_DELTA,
    WHAT_TO_SET,
    ChatBackend,
    ChatResult,
    LLMError,
    LLMInfraError,
    LLMParseError,
    LLMUnavailable,
    Message,
    ResponseFormatRejected,
    Retryable,
)
from agentui.llm.jsonextract import JSONExtractError, extract_json
from agentui.llm.schema import schema_for
from agentui.llm.structured import (
    FORMAT_MODES,
    SCHEMA_MODES,
    _describe,
    _with_schema,
    response_format_for,
    schema_note,
)

T = TypeVar("T", bound=BaseModel)


UsageSink = Callable[[LLMUsage], None]
#: told of a reply's text as it is generated: (role, call, what, text) — `call` numbers the
#: attempts of this client (parallel calls of one role stay apart), `what` is "start" (the attempt
#: begins; text ""), "delta" (the next piece of its text) or "end" (the attempt is over; text "")
DeltaSink = Callable[[str, int, str, str], None]


class LLMClient:
    """What a role holds. Same code for HTTP and in-process backends."""

    def __init__(
        self,
        backend: ChatBackend,
        role: Role | str,
        cfg: LLMConfig,
        *,
        on_usage: UsageSink | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.backend = backend
        self.role = str(role)
        self._cfg = cfg
        self._on_usage = on_usage
        self._sleep = sleep
        self._rng = rng or random.Random()
        # called with every exchange: {"role", "messages", "reply", "finish_reason", tokens…};
        # the runtime routes it to the task log (prompts and replies kept whole)
        self.tracer: Callable[[dict[str, Any]], None] | None = None
        # told of every endpoint failure before it is raised (the pool: health + the runtime)
        self.on_infra: Callable[[LLMInfraError], None] | None = None
        # told of the reply's text while it streams in (the runtime shows it); the result and the
        # accounting are the same with or without it
        self.on_delta: DeltaSink | None = None
        self._calls = itertools.count(1)

    def _watch(self, call: int, what: str, text: str = "") -> None:
        if self.on_delta is None:
            return
        try:
            self.on_delta(self.role, call, what, text)
        except Exception:  # noqa: BLE001 - a broken display must not break the call
            pass

    def _trace(self, messages: Sequence[Message], res: ChatResult | None, error: str | None = None) -> None:
        if self.tracer is None:
            return
        try:
            self.tracer({
                "kind": "llm", "role": self.role, "model": self.backend.model, "url": self.url,
                "messages": list(messages), "reply": res.text if res else None,
                "finish_reason": res.finish_reason if res else None,
                "prompt_tokens": res.prompt_tokens if res else 0,
                "completion_tokens": res.completion_tokens if res else 0,
                "latency_s": round(res.latency_s, 4) if res else 0.0, "error": error,
                "cut": res.cut if res else None,
            })
        except Exception:  # noqa: BLE001 - a broken log must not break the call
            pass

    @property
    def model(self) -> str:
        return self.backend.model

    @property
    def url(self) -> str:
        return self.backend.url

    def _usage(self, res: ChatResult | None, *, ok: bool, repairs: int = 0, error: str | None = None,
               latency: float = 0.0, failure: str | None = None, cut: str | None = None) -> None:
        if self._on_usage is None:
            return
        try:
            role = Role(self.role)
        except ValueError:
            role = Role.RUNTIME
        self._on_usage(LLMUsage(
            role=role,
            model=(res.model if res else self.backend.model) or "",
            prompt_tokens=res.prompt_tokens if res else 0,
            completion_tokens=res.completion_tokens if res else 0,
            latency_s=res.latency_s if res else latency,
            ok=ok, parse_repairs=repairs, error=error, failure=failure, cut=cut,
            cost_usd=res.cost if res else None,
        ))

    @property
    def budget(self) -> int:
        """This role's completion-token budget (derived from its reply schema, configurable)."""
        return self._cfg.budget_for(self.role)

    async def _infra(self, e: LLMInfraError) -> LLMInfraError:
        """Name the endpoint and model, add the fix, tell the pool (the runtime ends the task)."""
        e.role = e.role or self.role
        e.url = e.url or self.url
        e.model = e.model or self.backend.model
        if not e.fix:
            e.fix = await infra_fix(e, self.backend)
        if self.on_infra is not None:
            try:
                self.on_infra(e)
            except Exception:  # noqa: BLE001 - a broken listener must not hide the error
                pass
        return e

    async def _send(self, messages: Sequence[Message], *, response_format: dict[str, Any] | None,
                    max_tokens: int | None, timeout_s: float | None) -> ChatResult:
        """One logical request with retries; raises LLMError subclasses or ResponseFormatRejected."""
        attempts = self._cfg.max_retries + 1
        last = ""
        for i in range(attempts):
            watched = self.on_delta is not None
            call = next(self._calls)
            token = ON_DELTA.set(functools.partial(self._watch, call, "delta") if watched else None)
            if watched:
                self._watch(call, "start")
            try:
                try:
                    res = await self.backend.complete(
                        messages, role=self.role,
                        max_tokens=max_tokens or self.budget,
                        temperature=self._cfg.temperature,
                        response_format=response_format, timeout_s=timeout_s,
                    )
                finally:
                    ON_DELTA.reset(token)
                    if watched:
                        self._watch(call, "end")
                self._trace(messages, res)
                return res
            except LLMInfraError as e:
                self._trace(messages, None, str(e)[:300])
                raise await self._infra(e) from None
            except LLMError as e:
                if not isinstance(e, ResponseFormatRejected):
                    self._trace(messages, None, str(e)[:300])
                raise
            except Retryable as e:
                last = str(e)
                self._trace(messages, None, last[:300])
                if i + 1 >= attempts:
                    break
                base = min(self._cfg.backoff_max_s, self._cfg.backoff_base_s * (2**i))
                delay = base * (0.5 + self._rng.random() / 2)  # jitter
                if e.retry_after is not None:
                    delay = min(self._cfg.backoff_max_s, max(delay, e.retry_after))
                await self._sleep(delay)
        raise await self._infra(LLMUnavailable(
            f"{last} — gave up after {attempts} attempt(s); {WHAT_TO_SET}", role=self.role, url=self.url,
            said=f"{last} (after {attempts} attempt(s))",
        ))

    async def chat(self, messages: Sequence[Message], *, max_tokens: int | None = None,
                   timeout_s: float | None = None) -> ChatResult:
        """A plain completion. `finish_reason == "length"` is returned, not raised: callers of free
        text decide; :meth:`structured` treats it as a failure."""
        t0 = time.monotonic()
        try:
            res = await self._send(messages, response_format=None, max_tokens=max_tokens, timeout_s=timeout_s)
        except LLMError as e:
            self._usage(None, ok=False, error=str(e)[:200], latency=time.monotonic() - t0,
                        failure="infra" if isinstance(e, LLMInfraError) else None)
            raise
        self._usage(res, ok=True)
        return res

    async def structured(
        self,
        messages: Sequence[Message],
        model: type[T],
        *,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
        enums: Mapping[str, Sequence[str]] | None = None,
        retry_messages: Sequence[Message] | None = None,
    ) -> T:
        """A validated `model` instance, or LLMParseError (the model's output) / LLMInfraError.
        `enums` narrows fields of the sent schema (e.g. `tools` → the real tool names). After a cut
        reply the re-ask uses `retry_messages` (a shorter prompt) and a tighter budget."""
        token = EXPECT_JSON.set(True)
        try:
            return await self._structured(messages, model, max_tokens=max_tokens, timeout_s=timeout_s,
                                          enums=enums, retry_messages=retry_messages)
        finally:
            EXPECT_JSON.reset(token)

    async def _structured(self, messages: Sequence[Message], model: type[T], *, max_tokens: int | None,
                          timeout_s: float | None, enums: Mapping[str, Sequence[str]] | None,
                          retry_messages: Sequence[Message] | None = None) -> T:
        msgs = list(messages)
        want = "object" if schema_for(model).get("type") == "object" else "any"
        last_text = ""
        for attempt in (1, 2):
            res = await self._negotiated(msgs, model, max_tokens=max_tokens, timeout_s=timeout_s, enums=enums)
            last_text = res.text
            cut = res.cut or ("length" if res.finish_reason == "length" else None)
            try:
                if cut is not None:
                    raise JSONExtractError(f"reply was cut off ({cut})", truncated=True)
                ex = extract_json(res.text, want=want)
                value = model.model_validate(ex.value)
            except (JSONExtractError, ValidationError) as e:
                problem = _describe(e)
                # every unusable reply is a parse failure of this role, the re-ask included
                self._usage(res, ok=attempt == 1, repairs=1, error=problem if attempt == 2 else None,
                            failure="output", cut=cut or "invalid")
                if attempt == 2:
                    raise LLMParseError(
                        f"{self.role}: reply still invalid after a re-ask: {problem}",
                        raw=last_text, role=self.role, url=self.url, cut=cut or "invalid",
                    ) from e
                if cut is not None:
                    # a cut reply is not worth quoting back: the same request, shorter, with less room
                    max_tokens = max(64, (max_tokens or self.budget) * 2 // 3)
                    msgs = [*(retry_messages or messages), {"role": "user", "content": (
                        f"Your previous reply was cut off ({cut}) after {res.completion_tokens} tokens. "
                        f"Answer again with one SHORT JSON object (well under {max_tokens} tokens) "
                        "in the shape asked: few list items, brief strings, no repetition.")}]
                    continue
                shown = res.text if len(res.text) <= 1200 else res.text[:600] + " … " + res.text[-400:]
                msgs = [
                    *msgs,
                    {"role": "assistant", "content": shown},
                    {"role": "user", "content": (
                        f"That reply was not valid: {problem}. Answer again with exactly one JSON "
                        "object that matches the schema, with no other text."
                        + (" Keep it short." if cut is not None else "")
                        # the schema itself, which the first prompt left to the server
                        + (f"\n{schema_note(model, enums)}" if self.backend.format_mode in SCHEMA_MODES else "")
                    )},
                ]
                continue
            self._usage(res, ok=True, repairs=1 if ex.repaired else 0)
            return value
        raise AssertionError("unreachable")  # pragma: no cover

    async def _negotiated(self, msgs: Sequence[Message], model: type[BaseModel], *,
                          max_tokens: int | None, timeout_s: float | None,
                          enums: Mapping[str, Sequence[str]] | None = None) -> ChatResult:
        start = self.backend.format_mode or FORMAT_MODES[0]
        modes = FORMAT_MODES[FORMAT_MODES.index(start):]
        t0 = time.monotonic()
        for mode in modes:
            try:
                res = await self._send(_with_schema(msgs, model, enums, mode),
                                       response_format=response_format_for(mode, model, enums),
                                       max_tokens=max_tokens, timeout_s=timeout_s)
            except ResponseFormatRejected:
                continue  # the server refused this dialect: try the next one, remember the outcome
            except LLMError as e:
                self._usage(None, ok=False, error=str(e)[:200], latency=time.monotonic() - t0,
                            failure="infra" if isinstance(e, LLMInfraError) else None)
                raise
            self.backend.format_mode = mode
            return res
        raise AssertionError("prompt mode sends no response_format and cannot be rejected")  # pragma: no cover


async def infra_fix(e: LLMInfraError, backend: ChatBackend) -> str:
    """The fix for an endpoint failure; a missing model lists what the server has."""
    status = getattr(e, "status", 0)
    said = f"{e} {e.said}".lower()
    if status in (401, 403):
        return "set a valid key in AGENTUI_API_KEY or [llm] api_key"
    if status == 404 or "model" in said and ("not found" in said or "not exist" in said):
        try:
            models = await backend.list_models(timeout_s=3.0)
        except Exception:  # noqa: BLE001 - the fix is best-effort
            models = []
        have = f"; the server has: {', '.join(models[:8])}" if models else ""
        model = e.model or backend.model or "<model>"
        return (f"pull the model (Ollama: `ollama pull {model}`) or set AGENTUI_MODEL to one the "
                f"server has{have}")
    if "refused" in said or "connect" in said:
        return f"start the server at {e.url or backend.url}, or {WHAT_TO_SET}"
    if "timeout" in said or "did not answer" in said or "no answer" in said:
        return "the server is overloaded or stuck: check its log, or use a smaller model"
    return f"check the server's log; {WHAT_TO_SET}"
