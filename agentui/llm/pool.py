"""Providers and the pool: which endpoint serves each role, one client per role, preflight."""

from __future__ import annotations

import asyncio
import contextlib
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
    LLMInfraError,
    LLMNotConfigured,
    LLMUnavailable,
    Retryable,
    RoleUsage,
)
from agentui.llm.client import DeltaSink, LLMClient, UsageSink, infra_fix
from agentui.llm.http import EndpointSlots, HttpBackend, normalise_base_url

ROLE_TIERS = ("perceiver", "planner", "executor", "agent_validator", "meta_validator", "dreamer")


@dataclass
class EndpointHealth:
    url: str
    model: str = ""
    state: str = "unknown"  # unknown | ok | down
    message: str = ""
    since: float = 0.0


# passing preflights, per process: (url, model, completion) → result
_PREFLIGHT_OK: dict[tuple[str, str, bool], PreflightResult] = {}


@dataclass
class PreflightResult:
    url: str
    model: str
    ok: bool
    models: list[str] = field(default_factory=list)
    latency_s: float = 0.0
    reply: str = ""
    error: str = ""
    slow: bool = False  # the server answered, but the tiny completion took longer than the window
    kind: str = ""  # the LLMInfraError kind on failure, e.g. "model_not_found" (doctor: bad input)
    info: dict[str, str] = field(default_factory=dict)  # the failure as `run --json` prints infra_failure

    @property
    def unlisted(self) -> bool:
        """The server lists models, but not the configured one (it may still answer: llama.cpp)."""
        return bool(self.models) and bool(self.model) and self.model not in self.models


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
        # told of every endpoint failure (the runtime ends the task)
        self.on_infra_failure: Callable[[LLMInfraError], None] | None = None
        self._on_delta: DeltaSink | None = None
        self.health: dict[str, EndpointHealth] = {}
        self._backends: dict[tuple[str, str, str], ChatBackend] = {}
        self._slots: dict[str, EndpointSlots] = {}  # per endpoint URL, shared by its models
        self._clients: dict[str, LLMClient] = {}

    @property
    def on_delta(self) -> DeltaSink | None:
        """Told of every role's reply text as it streams in (the runtime sets it)."""
        return self._on_delta

    @on_delta.setter
    def on_delta(self, fn: DeltaSink | None) -> None:
        self._on_delta = fn
        for c in self._clients.values():
            c.on_delta = fn

    def _record(self, u: LLMUsage, b: ChatBackend | None = None) -> None:
        self.usage_by_role.setdefault(u.role.value, RoleUsage()).add(u)
        if b is not None and u.failure != "infra" and (u.ok or u.failure == "output"):
            self._mark(b, "ok", "")  # the endpoint answered, whatever the reply was worth
        if self.on_usage is not None:
            self.on_usage(u)

    def _mark(self, b: ChatBackend, state: str, message: str) -> None:
        h = self.health.get(b.url)
        if h is None or h.state != state or h.message != message:
            self.health[b.url] = EndpointHealth(url=b.url, model=b.model, state=state, message=message,
                                                since=time.time())

    def _infra(self, b: ChatBackend, e: LLMInfraError) -> None:
        self._mark(b, "down", e.describe())
        if self.on_infra_failure is not None:
            self.on_infra_failure(e)

    def health_report(self) -> list[dict[str, Any]]:
        """Per endpoint: state ("unknown" until a preflight or call, "ok", "down") and the message
        naming endpoint, model, what the server said and the fix — what the TUI header shows."""
        out = []
        for b in self.endpoints():
            h = self.health.get(b.url) or EndpointHealth(url=b.url, model=b.model)
            out.append({"url": h.url, "model": b.model or h.model, "state": h.state,
                        "message": h.message, "since": h.since})
        return out

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
            slots = self._slots.setdefault(key[1], EndpointSlots(self.config.llm.max_parallel))
            self._backends[key] = HttpBackend(url, ep.model, ep.api_key, self.config.llm, slots=slots)
        return self._backends[key]

    def for_role(self, role: Role | str) -> LLMClient:
        name = str(role)
        tier_role = name if name in ROLE_TIERS else "planner"
        if name not in self._clients:
            b = self._backend_for(tier_role)
            c = LLMClient(b, name, self.config.llm, on_usage=lambda u: self._record(u, b))
            c.tracer = lambda rec: self.tracer(rec) if self.tracer else None
            c.on_infra = lambda e, b=b: self._infra(b, e)
            c.on_delta = self._on_delta
            self._clients[name] = c
        return self._clients[name]

    def endpoints(self) -> list[ChatBackend]:
        if self._fixed is not None:
            return [self._fixed]
        for r in ROLE_TIERS:
            self._backend_for(r)
        return list(self._backends.values())

    async def preflight(self, *, timeout_s: float = 10.0, completion: bool = True,
                        wait_busy: Callable[[str, float], None] | None = None, patience_s: float = 0.0,
                        waiting: Callable[[str, float, str], None] | None = None) -> list[PreflightResult]:
        """Does every endpoint answer? Model list + one tiny real completion on the configured model,
        all within `timeout_s`; a pass is cached per process (`doctor` and `run` share it).
        With `wait_busy`, an endpoint that is up but busy (an earlier process's abandoned generation)
        gets `llm.idle_wait_s` more to finish it; `wait_busy(url, seconds)` is told before the wait.
        With `patience_s`, a slow endpoint is waited for instead (see :func:`preflight_backend`)."""
        out = []
        for b in self.endpoints():
            key = (b.url, b.model, completion)
            r = _PREFLIGHT_OK.get(key)
            if r is None:
                r = await preflight_backend(b, timeout_s=timeout_s, completion=completion, wait_busy=wait_busy,
                                            patience_s=patience_s, waiting=waiting)
                if r.ok:
                    _PREFLIGHT_OK[key] = r
            self._mark(b, "ok" if r.ok else "down", r.error)
            out.append(r)
        return out

    def totals(self) -> dict[str, Any]:
        u = self.usage_by_role.values()
        return {
            "llm_calls": sum(x.calls for x in u),
            "prompt_tokens": sum(x.prompt_tokens for x in u),
            "completion_tokens": sum(x.completion_tokens for x in u),
            "parse_repairs": sum(x.parse_repairs for x in u),
            "parse_failures": sum(x.parse_failures for x in u),
            "runaways_cut": sum(x.runaways_cut for x in u),
            "by_role": {k: v.as_dict() for k, v in sorted(self.usage_by_role.items())},
        }

    async def aclose(self) -> None:
        for b in self._backends.values():
            await b.aclose()
        self._backends.clear()
        self._clients.clear()


PREFLIGHT_TRIES = 3  # a connection reset or a 5xx is retried (0.25 s, 0.5 s) inside the preflight's window
# a patient preflight asks again this often while an answering server has not completed yet
PATIENT_RETRY_S = 1.0


def _dead(e: BaseException) -> bool:
    """The server is not there at all (refused, no route, DNS): nothing to wait for."""
    cause = e.__cause__
    if isinstance(cause, httpx.ConnectTimeout):
        return False  # a backlog full of work accepts slowly: slow, not dead
    if isinstance(cause, httpx.ConnectError | httpx.UnsupportedProtocol):
        return True
    return "cannot connect" in str(e)


async def _warm(b: ChatBackend, waiting: Callable[[str, float, str], None] | None) -> None:
    """A backend that loads its model in process (a GGUF) loads it here, before the check's clock
    starts: loading a model is not an endpoint failing to answer."""
    warm = getattr(b, "warm", None)
    if warm is None or getattr(b, "loaded", True):
        return
    t0 = time.monotonic()
    job = asyncio.ensure_future(warm())
    try:
        while True:  # told about once a second while the file loads, like a slow answer
            if waiting is not None:
                waiting(b.url, time.monotonic() - t0, "loading the model file")
            done, _ = await asyncio.wait({job}, timeout=1.0)
            if done:
                job.result()
                return
    finally:
        if not job.done():
            job.cancel()


# C901: the nested attempt and retry closures share the patience clock and count towards this function
async def preflight_backend(b: ChatBackend, *, timeout_s: float = 10.0, completion: bool = True,  # noqa: C901
                            wait_busy: Callable[[str, float], None] | None = None, patience_s: float = 0.0,
                            waiting: Callable[[str, float, str], None] | None = None) -> PreflightResult:
    """Model list + one tiny completion. Without patience everything fits in `timeout_s`. With
    `patience_s` (math.inf: as long as the caller lets it run) a server that answers but has not
    completed within `timeout_s` is *slow*, not down: the check keeps asking, telling
    `waiting(url, elapsed_s, why)` about once a second, until it answers or the patience ends. A
    server that is not there (refused, DNS) or says no (401, 404) still fails at once."""
    import math

    res = PreflightResult(url=b.url, model=b.model, ok=False)
    try:
        await _warm(b, waiting)
    except LLMError as e:
        res.error = str(e)
        return res
    t0 = time.monotonic()
    patient = patience_s > 0
    end_at = t0 + timeout_s + patience_s if patient else t0 + timeout_s
    state = {"reachable": False}  # the server answered something: a timeout then means busy, not down

    def left() -> float:
        return max(0.5, timeout_s - (time.monotonic() - t0))

    def call_s() -> float | None:
        if not patient:
            return left()
        rest = end_at - time.monotonic()
        return None if math.isinf(rest) else max(0.5, rest)

    async def one() -> None:
        try:
            res.models = await b.list_models(timeout_s=left() if not patient else max(left(), 10.0))
            state["reachable"] = True
        except LLMHTTPError:
            res.models = []  # some servers have no /models; the completion decides
            state["reachable"] = True
        if not b.model and res.models:
            b.model = res.models[0]
            res.model = b.model
        if completion:
            c = await b.complete(
                [{"role": "user", "content": "Reply with the single word: ok"}],
                role="runtime", max_tokens=8, temperature=0.0, response_format=None, timeout_s=call_s(),
            )
            res.reply = c.text.strip()[:40]

    async def attempts() -> None:
        attempt = 0
        while True:
            try:
                await one()
                return
            except LLMHTTPError:
                raise  # the server said no (401, 404 …): waiting changes nothing
            except (Retryable, LLMInfraError) as e:
                # a reset or a 5xx is tried again, like any call; a patient check also asks again
                # after a timed-out call, as long as the server is there at all
                attempt += 1
                if not patient:
                    if not isinstance(e, Retryable) or attempt >= PREFLIGHT_TRIES:
                        raise
                elif (time.monotonic() >= end_at or not isinstance(e, Retryable | LLMUnavailable)
                      or (_dead(e) and (not state["reachable"] or attempt >= PREFLIGHT_TRIES))):
                    raise
                await asyncio.sleep(min(PATIENT_RETRY_S * attempt, 5.0) if patient else 0.25 * 2 ** (attempt - 1))

    job = asyncio.ensure_future(attempts())
    try:
        try:
            done, _ = await asyncio.wait({job}, timeout=timeout_s)
            while not done and patient and time.monotonic() < end_at:
                res.slow = True
                if waiting is not None:
                    waiting(b.url, time.monotonic() - t0, _why_waiting(state["reachable"]))
                done, _ = await asyncio.wait({job}, timeout=min(1.0, max(0.05, end_at - time.monotonic())))
            if not done:
                raise TimeoutError
            job.result()
        finally:
            if not job.done():
                job.cancel()
                with contextlib.suppress(BaseException):
                    await job
        res.ok = True
    except TimeoutError:
        res.slow = True
        busy_error = None
        if wait_busy is not None and completion and state["reachable"] and not patient:
            busy_error = await _busy_then_idle(b, wait_busy)
            if not busy_error:
                res.ok, res.reply = True, "(answered after the endpoint finished another generation)"
                res.latency_s = time.monotonic() - t0
                return res
        waited = time.monotonic() - t0
        res.error = busy_error or LLMUnavailable(
            "", url=b.url, model=b.model,
            said=(f"slow: no tiny completion within {waited:.0f} s — the server answers, but the model is still "
                  "loading or busy with another generation" if state["reachable"] else
                  f"slow: no answer within {waited:.0f} s"),
            fix="wait and check again (agentui keeps checking in the UI), check the server's log, "
                "or use a smaller model").describe()
    except Retryable as e:
        u = LLMUnavailable("", url=b.url, model=b.model, said=str(e), fix=f"start the server, or {WHAT_TO_SET}")
        res.error, res.info = u.describe(), {**u.as_dict(), "role": "preflight"}
    except LLMInfraError as e:
        e.url, e.model = e.url or b.url, e.model or b.model
        e.fix = e.fix or await infra_fix(e, b)
        res.error = e.describe()
        res.kind = e.kind
        res.info = {**e.as_dict(), "role": e.role or "preflight"}
    except LLMError as e:
        res.error = f"{e}" if "AGENTUI_" in str(e) else f"{e}; {WHAT_TO_SET}"
    res.latency_s = time.monotonic() - t0
    return res


def _why_waiting(reachable: bool) -> str:
    """Why the check is still waiting, in the words the UI and `run` show."""
    if not reachable:
        return "connected, no answer yet"
    return "loading / busy"


async def _busy_then_idle(b: ChatBackend, tell: Callable[[str, float], None]) -> str:
    """The server listed its models but the tiny completion timed out: it is most likely still
    generating a reply an earlier, killed process abandoned (llama.cpp finishes the prompt before it
    notices the closed connection). Wait for it, bounded, instead of failing this task.
    Returns "" once idle, else the error to show."""
    if not isinstance(b, HttpBackend):
        return "no tiny completion (busy, or too slow)"
    tell(b.url, b.idle_wait_s)
    try:
        await b.wait_until_idle(role="runtime")
    except LLMInfraError as e:
        return e.describe()
    except LLMError as e:
        return str(e)
    return ""
