"""One async client for any OpenAI-compatible `/v1/chat/completions` endpoint (DESIGN §4).

Layers, bottom up:

* a *backend* sends one chat request and returns a :class:`ChatResult` — :class:`HttpBackend`
  (httpx) or the in-process llama.cpp backend in :mod:`agentui.llm.local`;
* :class:`LLMClient` is what a role holds: retries with backoff and jitter (connect errors, 429,
  5xx — never other 4xx), cancellation, token/latency accounting, and :meth:`LLMClient.structured`
  — response_format negotiation, schema in the prompt, JSON extraction, pydantic validation and
  one re-ask carrying the error;
* :class:`LLMPool` builds one client per role from the config's tiers and keeps usage by role.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import BaseModel, ValidationError

from agentui.config import Config, LLMConfig
from agentui.contracts import LLMUsage, Role
from agentui.llm.jsonextract import JSONExtractError, extract_json
from agentui.llm.schema import compact_schema_text, schema_for

T = TypeVar("T", bound=BaseModel)
Message = dict[str, str]

# response_format dialects, strongest first (DESIGN §4)
FORMAT_MODES = ("json_schema", "json_object_schema", "json_object", "prompt")

WHAT_TO_SET = (
    "set AGENTUI_BASE_URL (e.g. http://localhost:11434/v1 for Ollama) and AGENTUI_MODEL, "
    "or [llm] base_url/model in the config file, or AGENTUI_PROVIDER=local with AGENTUI_GGUF"
)


class LLMError(Exception):
    """Any failure talking to a model. `role` and `url` say which call failed."""

    def __init__(self, message: str, *, role: str = "", url: str = "") -> None:
        super().__init__(message)
        self.role = role
        self.url = url


class LLMUnavailable(LLMError):
    """The endpoint did not answer (refused, DNS, timeout, repeated 5xx/429)."""


class LLMHTTPError(LLMError):
    """A non-retryable HTTP error (4xx other than 429)."""

    def __init__(self, message: str, *, status: int, body: str = "", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.status = status
        self.body = body


class LLMParseError(LLMError):
    """The reply could not be turned into the requested value, even after one re-ask."""

    def __init__(self, message: str, *, raw: str = "", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.raw = raw


class LLMNotConfigured(LLMError):
    """No endpoint and no local model: says exactly what to set."""


class ResponseFormatRejected(LLMError):
    """The server refused the `response_format` field; the client downgrades and retries."""


@dataclass(frozen=True)
class ChatResult:
    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""


@dataclass
class RoleUsage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    parse_repairs: int = 0
    errors: int = 0

    def add(self, u: LLMUsage) -> None:
        self.calls += 1
        self.prompt_tokens += u.prompt_tokens
        self.completion_tokens += u.completion_tokens
        self.seconds += u.latency_s
        self.parse_repairs += u.parse_repairs
        self.errors += 0 if u.ok else 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 3),
            "parse_repairs": self.parse_repairs,
            "errors": self.errors,
        }


def normalise_base_url(url: str) -> str:
    """`host`, `host/`, `host/v1`, `host/v1/chat/completions` → `http(s)://host/v1`."""
    url = url.strip()
    if not url:
        raise ValueError("empty base URL")
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if not parts.netloc:
        raise ValueError(f"not a URL: {url!r}")
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions", "/models"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    if not re.search(r"/v\d+[a-z0-9]*(/|$)", path):
        path = path + "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def response_format_for(mode: str, model: type[BaseModel]) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": model.__name__, "schema": schema_for(model), "strict": False},
        }
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema_for(model)}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


class ChatBackend(Protocol):
    url: str
    model: str
    format_mode: str | None  # negotiated response_format dialect, cached per endpoint

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        role: str,
        max_tokens: int,
        temperature: float,
        response_format: dict[str, Any] | None,
        timeout_s: float | None = None,
    ) -> ChatResult: ...

    async def list_models(self, *, timeout_s: float) -> list[str]: ...

    async def aclose(self) -> None: ...


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _looks_like_format_rejection(status: int, body: str) -> bool:
    if status not in (400, 422, 500):
        return False
    low = body.lower()
    return "response_format" in low or "json_schema" in low or "response format" in low


class HttpBackend:
    """OpenAI-compatible HTTP endpoint. One `httpx.AsyncClient` per endpoint."""

    def __init__(self, base_url: str, model: str | None, api_key: str | None, cfg: LLMConfig) -> None:
        self.url = normalise_base_url(base_url)
        self.model = model or ""
        self.format_mode: str | None = None if cfg.structured_output == "auto" else cfg.structured_output
        self._cfg = cfg
        headers = {"Content-Type": "application/json", "User-Agent": "agentui"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._timeout = httpx.Timeout(cfg.read_timeout_s, connect=cfg.connect_timeout_s)
        self._http = httpx.AsyncClient(base_url=self.url, headers=headers, timeout=self._timeout)

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
        body: dict[str, Any] = {
            "model": self.model or "default",
            "messages": list(messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": False,
        }
        if response_format is not None:
            body["response_format"] = response_format
        timeout = self._timeout
        if timeout_s is not None:
            timeout = httpx.Timeout(timeout_s, connect=min(self._cfg.connect_timeout_s, timeout_s))
        t0 = time.monotonic()
        try:
            r = await self._http.post(
                "/chat/completions", json=body, headers={"X-Agentui-Role": role}, timeout=timeout
            )
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError) as e:
            raise _Retryable(f"cannot connect to {self.url} ({type(e).__name__}: {e})") from e
        except httpx.TimeoutException as e:
            raise LLMUnavailable(
                f"{self.url} did not answer within {timeout.read:.0f} s", role=role, url=self.url
            ) from e
        except httpx.HTTPError as e:
            raise _Retryable(f"HTTP error talking to {self.url}: {e}") from e
        latency = time.monotonic() - t0
        text = r.text
        if r.status_code == 429 or r.status_code >= 500:
            if response_format is not None and _looks_like_format_rejection(r.status_code, text):
                raise ResponseFormatRejected(text[:300], role=role, url=self.url)
            ra = _retry_after(r.headers.get("retry-after"))
            raise _Retryable(f"HTTP {r.status_code} from {self.url}: {text[:200]}", ra)
        if r.status_code >= 400:
            if response_format is not None and _looks_like_format_rejection(r.status_code, text):
                raise ResponseFormatRejected(text[:300], role=role, url=self.url)
            hint = " (check AGENTUI_API_KEY)" if r.status_code in (401, 403) else ""
            raise LLMHTTPError(
                f"HTTP {r.status_code} from {self.url}{hint}: {text[:300]}",
                status=r.status_code, body=text, role=role, url=self.url,
            )
        try:
            data = r.json()
            choice = data["choices"][0]
            content = choice.get("message", {}).get("content")
            if content is None:
                content = choice.get("text", "")
            usage = data.get("usage") or {}
            return ChatResult(
                text=content if isinstance(content, str) else json.dumps(content),
                finish_reason=choice.get("finish_reason"),
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                latency_s=latency,
                model=str(data.get("model") or self.model),
            )
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
            raise LLMError(
                f"{self.url} sent a reply that is not an OpenAI chat completion: {text[:200]!r}",
                role=role, url=self.url,
            ) from e

    async def list_models(self, *, timeout_s: float) -> list[str]:
        try:
            r = await self._http.get("/models", timeout=httpx.Timeout(timeout_s))
        except httpx.TimeoutException as e:
            raise LLMUnavailable(f"{self.url} did not answer within {timeout_s:.0f} s", url=self.url) from e
        except httpx.HTTPError as e:
            raise LLMUnavailable(f"cannot connect to {self.url} ({type(e).__name__})", url=self.url) from e
        if r.status_code >= 400:
            raise LLMHTTPError(f"HTTP {r.status_code} from {self.url}/models", status=r.status_code,
                               body=r.text, url=self.url)
        try:
            return [str(m["id"]) for m in r.json().get("data", [])]
        except (ValueError, KeyError, TypeError, AttributeError):
            return []

    async def aclose(self) -> None:
        await self._http.aclose()


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


UsageSink = Callable[[LLMUsage], None]


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
               latency: float = 0.0) -> None:
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
            ok=ok, parse_repairs=repairs, error=error,
        ))

    async def _send(self, messages: Sequence[Message], *, response_format: dict[str, Any] | None,
                    max_tokens: int | None, timeout_s: float | None) -> ChatResult:
        """One logical request with retries; raises LLMError subclasses or ResponseFormatRejected."""
        attempts = self._cfg.max_retries + 1
        last = ""
        for i in range(attempts):
            try:
                res = await self.backend.complete(
                    messages, role=self.role,
                    max_tokens=max_tokens or self._cfg.max_tokens,
                    temperature=self._cfg.temperature,
                    response_format=response_format, timeout_s=timeout_s,
                )
                self._trace(messages, res)
                return res
            except LLMError as e:
                if not isinstance(e, ResponseFormatRejected):
                    self._trace(messages, None, str(e)[:300])
                raise
            except _Retryable as e:
                last = str(e)
                self._trace(messages, None, last[:300])
                if i + 1 >= attempts:
                    break
                base = min(self._cfg.backoff_max_s, self._cfg.backoff_base_s * (2**i))
                delay = base * (0.5 + self._rng.random() / 2)  # jitter
                if e.retry_after is not None:
                    delay = min(self._cfg.backoff_max_s, max(delay, e.retry_after))
                await self._sleep(delay)
        raise LLMUnavailable(
            f"{last} — gave up after {attempts} attempt(s); {WHAT_TO_SET}", role=self.role, url=self.url
        )

    async def chat(self, messages: Sequence[Message], *, max_tokens: int | None = None,
                   timeout_s: float | None = None) -> ChatResult:
        """A plain completion. `finish_reason == "length"` is returned, not raised: callers of free
        text decide; :meth:`structured` treats it as a failure."""
        t0 = time.monotonic()
        try:
            res = await self._send(messages, response_format=None, max_tokens=max_tokens, timeout_s=timeout_s)
        except LLMError as e:
            self._usage(None, ok=False, error=str(e)[:200], latency=time.monotonic() - t0)
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
    ) -> T:
        """A validated `model` instance, or LLMParseError / LLMUnavailable / LLMHTTPError."""
        msgs = _with_schema(messages, model)
        want = "object" if schema_for(model).get("type") == "object" else "any"
        last_text = ""
        for attempt in (1, 2):
            res = await self._negotiated(msgs, model, max_tokens=max_tokens, timeout_s=timeout_s)
            last_text = res.text
            try:
                if res.finish_reason == "length":
                    raise JSONExtractError("reply was cut off at max_tokens (finish_reason=length)", truncated=True)
                ex = extract_json(res.text, want=want)
                value = model.model_validate(ex.value)
            except (JSONExtractError, ValidationError) as e:
                problem = _describe(e)
                self._usage(res, ok=attempt == 1, repairs=1, error=problem if attempt == 2 else None)
                if attempt == 2:
                    raise LLMParseError(
                        f"{self.role}: reply still invalid after a re-ask: {problem}",
                        raw=last_text, role=self.role, url=self.url,
                    ) from e
                shown = res.text if len(res.text) <= 1200 else res.text[:600] + " … " + res.text[-400:]
                msgs = [
                    *msgs,
                    {"role": "assistant", "content": shown},
                    {"role": "user", "content": (
                        f"That reply was not valid: {problem}. Answer again with exactly one JSON "
                        "object that matches the schema, with no other text."
                        + (" Keep it short." if res.finish_reason == "length" else "")
                    )},
                ]
                continue
            self._usage(res, ok=True, repairs=1 if ex.repaired else 0)
            return value
        raise AssertionError("unreachable")  # pragma: no cover

    async def _negotiated(self, msgs: Sequence[Message], model: type[BaseModel], *,
                          max_tokens: int | None, timeout_s: float | None) -> ChatResult:
        start = self.backend.format_mode or FORMAT_MODES[0]
        modes = FORMAT_MODES[FORMAT_MODES.index(start):]
        t0 = time.monotonic()
        for mode in modes:
            try:
                res = await self._send(msgs, response_format=response_format_for(mode, model),
                                       max_tokens=max_tokens, timeout_s=timeout_s)
            except ResponseFormatRejected:
                continue  # the server refused this dialect: try the next one, remember the outcome
            except LLMError as e:
                self._usage(None, ok=False, error=str(e)[:200], latency=time.monotonic() - t0)
                raise
            self.backend.format_mode = mode
            return res
        raise AssertionError("prompt mode sends no response_format and cannot be rejected")  # pragma: no cover


def _with_schema(messages: Sequence[Message], model: type[BaseModel]) -> list[Message]:
    """The schema goes into the prompt anyway (DESIGN §4): the system message, or a new one."""
    note = (
        "Reply with exactly one JSON object and nothing else, matching this JSON schema:\n"
        + compact_schema_text(model)
    )
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0]['content']}\n\n{note}"
    else:
        out.insert(0, {"role": "system", "content": note})
    return out


def _describe(e: Exception) -> str:
    if isinstance(e, ValidationError):
        parts = []
        for err in e.errors()[:4]:
            loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
            parts.append(f"{loc}: {err.get('msg')}")
        return "; ".join(parts)
    return str(e)


# ---------------------------------------------------------------------------- pool and providers

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
    except _Retryable as e:
        res.error = f"{e}; {WHAT_TO_SET}"
    except LLMError as e:
        res.error = f"{e}" if "AGENTUI_" in str(e) else f"{e}; {WHAT_TO_SET}"
    res.latency_s = time.monotonic() - t0
    return res
