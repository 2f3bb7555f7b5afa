"""Providers and the pool: which endpoint serves each role, one client per role, preflight."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from agentui.config import Config
from agentui.contracts import LLMUsage, Role
from agentui.llm.base import (
    WHAT_TO_SET,
    ChatBackend,
    LLMError,
    LLMHTTPError,
    LLMNotConfigured,
    Retryable,
    RoleUsage,
)
from agentui.llm.client import LLMClient, UsageSink
from agentui.llm.http import HttpBackend, normalise_base_url

ROLE_TIERS = ("perceiver", "planner", "executor", "agent_validator", "meta_validator", "dreamer")


@dataclass
class PreflightResult:
    url: str
    model: str
    ok: bool
    models: list[str] = field(default_factory=list)
    latency_s: float = 0.0
    reply: str = ""
    error: str = ""


@dataclass(frozen=True)
class Provider:
    kind: str  # "http" | "local"
    base_url: str | None = None
    gguf: str | None = None
    detected: str = ""  # how it was found, for doctor/onboarding


def resolve_provider(config: Config, env: dict[str, str] | None = None) -> Provider:
    """Which provider serves the roles. Raises LLMNotConfigured with what to set."""
    import os

    env = dict(os.environ) if env is None else env
    llm = config.llm
    any_url = llm.base_url or llm.brain.base_url or llm.tool.base_url
    if llm.provider == "local" or (llm.provider == "auto" and not any_url and llm.gguf):
        if not llm.gguf:
            raise LLMNotConfigured("provider is 'local' but no GGUF is set: set AGENTUI_GGUF or [llm] gguf")
        return Provider("local", gguf=llm.gguf, detected="local GGUF")
    if any_url:
        return Provider("http", base_url=any_url, detected="configured")
    if llm.provider == "auto" and not env.get("AGENTUI_NO_AUTODETECT"):
        url = _probe_ollama()
        if url:
            return Provider("http", base_url=url, detected="Ollama on localhost")
    raise LLMNotConfigured(f"no LLM is configured: {WHAT_TO_SET}")


def _probe_ollama(timeout_s: float = 0.3) -> str | None:
    try:
        r = httpx.get("http://127.0.0.1:11434/v1/models", timeout=timeout_s)
        if r.status_code == 200:
            return "http://127.0.0.1:11434/v1"
    except httpx.HTTPError:
        pass
    return None


class LLMPool:
    """One client per role, one backend per distinct endpoint, usage accounted per role."""

    def __init__(self, config: Config, *, on_usage: UsageSink | None = None,
                 provider: Provider | None = None, env: dict[str, str] | None = None,
                 backend: ChatBackend | None = None) -> None:
        self.config = config
        self._fixed = backend  # one backend for every role (benchmarks, embedding)
        self.provider = provider or (Provider("custom", detected="given") if backend else resolve_provider(config, env))
        self.usage_by_role: dict[str, RoleUsage] = {}
        self.on_usage = on_usage  # called after the pool's own accounting (the runtime sets it)
        self.tracer: Callable[[dict[str, Any]], None] | None = None
        self._backends: dict[tuple[str, str, str], ChatBackend] = {}
        self._clients: dict[str, LLMClient] = {}

    def _record(self, u: LLMUsage) -> None:
        self.usage_by_role.setdefault(u.role.value, RoleUsage()).add(u)
        if self.on_usage is not None:
            self.on_usage(u)

    def _backend_for(self, role: str) -> ChatBackend:
        if self._fixed is not None:
            return self._fixed
        if self.provider.kind == "local":
            key = ("local", self.provider.gguf or "", "")
            if key not in self._backends:
                from agentui.llm.local import LocalLlamaBackend

                self._backends[key] = LocalLlamaBackend(self.provider.gguf or "", self.config.llm)
            return self._backends[key]
        ep = self.config.role_endpoint(role)
        url = ep.base_url or self.provider.base_url or ""
        key = ("http", normalise_base_url(url), ep.model or "")
        if key not in self._backends:
            self._backends[key] = HttpBackend(url, ep.model, ep.api_key, self.config.llm)
        return self._backends[key]

    def for_role(self, role: Role | str) -> LLMClient:
        name = str(role)
        tier_role = name if name in ROLE_TIERS else "planner"
        if name not in self._clients:
            c = LLMClient(self._backend_for(tier_role), name, self.config.llm, on_usage=self._record)
            c.tracer = lambda rec: self.tracer(rec) if self.tracer else None
            self._clients[name] = c
        return self._clients[name]

    def endpoints(self) -> list[ChatBackend]:
        if self._fixed is not None:
            return [self._fixed]
        for r in ROLE_TIERS:
            self._backend_for(r)
        return list(self._backends.values())

    async def preflight(self, *, timeout_s: float = 10.0, completion: bool = True) -> list[PreflightResult]:
        """Does every endpoint answer? Model list + one tiny completion, all within `timeout_s`."""
        out = []
        for b in self.endpoints():
            out.append(await preflight_backend(b, timeout_s=timeout_s, completion=completion))
        return out

    def totals(self) -> dict[str, Any]:
        u = self.usage_by_role.values()
        return {
            "llm_calls": sum(x.calls for x in u),
            "prompt_tokens": sum(x.prompt_tokens for x in u),
            "completion_tokens": sum(x.completion_tokens for x in u),
            "parse_repairs": sum(x.parse_repairs for x in u),
            "by_role": {k: v.as_dict() for k, v in sorted(self.usage_by_role.items())},
        }

    async def aclose(self) -> None:
        for b in self._backends.values():
            await b.aclose()
        self._backends.clear()
        self._clients.clear()


async def preflight_backend(b: ChatBackend, *, timeout_s: float = 10.0, completion: bool = True) -> PreflightResult:
    t0 = time.monotonic()
    res = PreflightResult(url=b.url, model=b.model, ok=False)

    def left() -> float:
        return max(0.5, timeout_s - (time.monotonic() - t0))

    try:
        async with asyncio.timeout(timeout_s):
            try:
                res.models = await b.list_models(timeout_s=left())
            except LLMHTTPError:
                res.models = []  # some servers have no /models; the completion decides
            if not b.model and res.models:
                b.model = res.models[0]
                res.model = b.model
            if completion:
                c = await b.complete(
                    [{"role": "user", "content": "Reply with the single word: ok"}],
                    role="runtime", max_tokens=8, temperature=0.0, response_format=None, timeout_s=left(),
                )
                res.reply = c.text.strip()[:40]
            res.ok = True
    except TimeoutError:
        res.error = f"{b.url} did not answer within {timeout_s:.0f} s; {WHAT_TO_SET}"
    except Retryable as e:
        res.error = f"{e}; {WHAT_TO_SET}"
    except LLMError as e:
        res.error = f"{e}" if "AGENTUI_" in str(e) else f"{e}; {WHAT_TO_SET}"
    res.latency_s = time.monotonic() - t0
    return res
