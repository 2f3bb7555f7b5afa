"""The OpenAI-compatible HTTP backend: one `httpx.AsyncClient` per endpoint (DESIGN §4)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from agentui.config import LLMConfig
from agentui.llm.base import (
    EXPECT_JSON,
    ON_DELTA,
    ChatResult,
    LLMHTTPError,
    LLMNotOpenAI,
    LLMUnavailable,
    Message,
    ResponseFormatRejected,
    Retryable,
)
from agentui.llm.stream import ReplyGuard, chunk_fields, sse_events


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


def _looks_like_format_rejection(status: int, body: str) -> bool:
    if status not in (400, 422, 500):
        return False
    low = body.lower()
    return "response_format" in low or "json_schema" in low or "response format" in low


def http_why(e: BaseException) -> str:
    """What went wrong, never empty: httpx raises a bare ReadError("") on a connection reset."""
    text = str(e).strip()
    if text:
        return f"{type(e).__name__}: {text}"
    return {"ReadError": "the connection was reset or closed while reading the reply",
            "WriteError": "the connection was reset or closed while sending the request",
            "RemoteProtocolError": "the server closed the connection without a complete reply",
            "ConnectError": "the connection was refused or reset"}.get(type(e).__name__, type(e).__name__)


class HttpBackend:
    """OpenAI-compatible HTTP endpoint. One `httpx.AsyncClient` per endpoint.

    Replies are streamed: an idle timeout between chunks (tokens flowing = alive), a
    per-call deadline, and the connection closed as soon as the reply is complete or runs away
    (:class:`~agentui.llm.stream.ReplyGuard`) — closing is how the server learns to stop. A
    server that answers `stream: true` with a plain completion (or refuses it) is remembered
    per endpoint, like the response_format dialect. After a timeout the next call first waits,
    bounded, until the endpoint answers a one-token completion (never stack work on it)."""

    def __init__(self, base_url: str, model: str | None, api_key: str | None, cfg: LLMConfig,
                 slots: EndpointSlots | None = None) -> None:
        self.url = normalise_base_url(base_url)
        # calls in flight on this endpoint (shared by every backend on the same URL): llama.cpp-style
        # servers interrupt or queue a running generation when another request arrives
        self.slots = slots or EndpointSlots(cfg.max_parallel)
        self.model = model or ""
        self.format_mode: str | None = None if cfg.structured_output == "auto" else cfg.structured_output
        self.streams: bool | None = None if cfg.stream else False  # None: not yet known
        self._cfg = cfg
        headers = {"Content-Type": "application/json", "User-Agent": "agentui"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._timeout = httpx.Timeout(cfg.read_timeout_s, connect=cfg.connect_timeout_s)
        self._http = httpx.AsyncClient(base_url=self.url, headers=headers, timeout=self._timeout)
        self._suspect = False  # a call timed out: the server may still be generating
        self._idle_lock = asyncio.Lock()
        self.idle_checks = 0  # how often the endpoint had to prove it was idle (stats, tests)

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
        async with self.slots.get():
            return await self._complete(messages, role=role, max_tokens=max_tokens, temperature=temperature,
                                        response_format=response_format, timeout_s=timeout_s)

    async def _complete(self, messages: Sequence[Message], *, role: str, max_tokens: int, temperature: float,
                        response_format: dict[str, Any] | None, timeout_s: float | None) -> ChatResult:
        if self._suspect:
            await self.wait_idle(role=role)
        stream = self.streams is not False
        body: dict[str, Any] = {
            "model": self.model or "default",
            "messages": list(messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": stream,
        }
        if response_format is not None:
            body["response_format"] = response_format
        deadline = timeout_s if timeout_s is not None else self._cfg.call_deadline_s
        connect = min(self._cfg.connect_timeout_s, deadline)
        t0 = time.monotonic()
        try:
            if stream:
                try:
                    return await self._streamed(body, role, max_tokens, deadline, connect,
                                                want_json=EXPECT_JSON.get())
                except _NoStream:
                    self.streams = False
                    body["stream"] = False
            return await self._whole(body, role, response_format, deadline, connect, t0)
        except httpx.TimeoutException as e:
            self._suspect = True
            raise Retryable(f"no answer within {deadline:g} s (timeout)") from e

    async def _whole(self, body: dict[str, Any], role: str, response_format: dict[str, Any] | None,
                     deadline: float, connect: float, t0: float) -> ChatResult:
        """The non-streaming exchange: the whole reply within the call's deadline."""
        # the whole reply comes at once: give it the call's deadline, not the first-token wait —
        # abandoning a reply still being generated leaves an orphan on the server
        timeout = httpx.Timeout(deadline, connect=connect)
        try:
            async with asyncio.timeout(deadline):
                r = await self._http.post("/chat/completions", json=body, headers={"X-Agentui-Role": role},
                                          timeout=timeout)
        except TimeoutError as e:
            self._suspect = True
            raise Retryable(f"no answer within {deadline:g} s (timeout)") from e
        except asyncio.CancelledError:
            # abandoned (Esc, a fan-in timeout): a server that does not stream keeps generating
            # the reply, so the next call waits until it is idle instead of queueing behind it
            self._suspect = True
            raise
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError) as e:
            raise Retryable(f"cannot connect to {self.url} ({http_why(e)})") from e
        except httpx.TimeoutException as e:
            self._suspect = True
            raise Retryable(f"no answer within {timeout.read:g} s (timeout)") from e
        except httpx.HTTPError as e:
            raise Retryable(f"HTTP error talking to {self.url}: {http_why(e)}") from e
        text = r.text
        self._check_status(r.status_code, text, r.headers, role, response_format)
        return self._parse_whole(text, role, t0, r.headers)

    def _not_openai(self, text: str, role: str) -> LLMNotOpenAI:
        return LLMNotOpenAI(
            f"{self.url} sent a reply that is not an OpenAI chat completion: {text[:200]!r}",
            role=role, url=self.url, model=self.model, said=f"not a chat completion: {_said(text)}",
            fix="point AGENTUI_BASE_URL at an OpenAI-compatible /v1 endpoint",
        )

    def _check_status(self, status: int, text: str, headers: Any, role: str,
                      response_format: dict[str, Any] | None) -> None:
        if status == 429 or status >= 500:
            if response_format is not None and _looks_like_format_rejection(status, text):
                raise ResponseFormatRejected(text[:300], role=role, url=self.url)
            raise Retryable(f"HTTP {status} from {self.url}: {_said(text)}", _retry_after(headers.get("retry-after")))
        if status >= 400:
            if response_format is not None and _looks_like_format_rejection(status, text):
                raise ResponseFormatRejected(text[:300], role=role, url=self.url)
            hint = " (check AGENTUI_API_KEY)" if status in (401, 403) else ""
            raise LLMHTTPError(
                f"HTTP {status} from {self.url}{hint}: {text[:300]}",
                status=status, body=text, role=role, url=self.url, model=self.model,
                said=f"HTTP {status} {_said(text)}",
            )

    # C901: one streamed exchange; the read loop and its error paths share the cut/finish/done state
    async def _streamed(self, body: dict[str, Any], role: str, budget: int, deadline: float,  # noqa: C901
                        connect: float, *, want_json: bool) -> ChatResult:
        """One streamed exchange. Leaving the `async with` closes the connection — on a complete
        value, a runaway, the deadline, an idle timeout or cancellation alike."""
        cfg = self._cfg
        t0 = time.monotonic()
        end_at = t0 + deadline
        guard = ReplyGuard(budget, want_json=want_json)
        told = ON_DELTA.get()  # someone watches the text as it comes
        finish: str | None = None
        cut: str | None = None
        usage: dict[str, Any] = {}
        value_done = False  # the JSON value is complete: the stream is left before its end
        rest: list[str] = []  # events already received after the value's last token
        model = self.model
        sse = False  # the reply is streaming: closing it stops the server's generation
        # httpx's read timeout is per read: the wait for the first token (prompt processing) is
        # bounded by read_timeout_s, every later gap by idle_timeout_s — both by the deadline
        timeout = httpx.Timeout(None, connect=connect)
        req = self._http.build_request("POST", "/chat/completions", json=body, timeout=timeout,
                                       headers={"X-Agentui-Role": role})
        try:
            try:
                r = await asyncio.wait_for(self._http.send(req, stream=True),
                                           timeout=min(cfg.read_timeout_s, deadline))
            except TimeoutError:
                self._suspect = True
                raise Retryable(f"no answer within {min(cfg.read_timeout_s, deadline):g} s from "
                                f"{self.url} (timeout)") from None
            async with contextlib.aclosing(r):
                ctype = r.headers.get("content-type", "")
                if r.status_code >= 400:
                    text = (await _read_bounded(r, end_at)).decode("utf-8", "replace")
                    if (
                        r.status_code in (400, 422)
                        and "stream" in text.lower()
                        and "response_format" not in text.lower()
                    ):
                        raise _NoStream()
                    self._check_status(r.status_code, text, r.headers, role, body.get("response_format"))
                if "text/event-stream" not in ctype:
                    raw = (await _read_bounded(r, end_at)).decode("utf-8", "replace")
                    self.streams = False  # a plain completion: remember, like the format dialect
                    return self._parse_whole(raw, role, t0, r.headers)
                self.streams = sse = True
                it = r.aiter_text()
                buf = ""
                done = False
                while not done:
                    left = end_at - time.monotonic()
                    if left <= 0:
                        cut = "deadline"
                        break
                    wait = cfg.idle_timeout_s if guard.text else cfg.read_timeout_s
                    try:
                        piece = await asyncio.wait_for(anext(it), timeout=min(wait, left))
                    except StopAsyncIteration:
                        break
                    except TimeoutError:
                        if time.monotonic() >= end_at - 0.01 and guard.text:
                            cut = "deadline"
                            break
                        self._suspect = True
                        what = "no token" if guard.text else "no first token"
                        raise Retryable(f"{what} for {min(wait, left):g} s from {self.url} (idle timeout; "
                                        f"{guard.tokens} tokens so far)") from None
                    events, buf = sse_events(buf + piece)
                    for i, ev in enumerate(events):
                        if ev.strip() == "[DONE]":
                            done = True
                            break
                        try:
                            payload = json.loads(ev)
                        except ValueError:
                            raise self._not_openai(ev, role) from None
                        if isinstance(payload, dict) and payload.get("error"):
                            raise Retryable(f"{self.url} failed mid-reply: {_said(json.dumps(payload))}")
                        model = str(payload.get("model") or model) if isinstance(payload, dict) else model
                        for delta, fin, use in chunk_fields(payload):
                            if use:
                                usage = use
                            if fin:
                                finish = fin
                            why = guard.feed(delta)
                            if told is not None and delta:
                                tell(told, delta)
                            if why == "done":
                                finish, done = finish or "stop", True
                                value_done, rest = True, events[i + 1:]
                            elif why is not None:
                                cut, done = why, True
                            if done:
                                break
                        if done:
                            break
                if value_done and not usage:  # the usage chunk (tokens, cost) comes right after the end
                    usage = await _usage_after(it, rest, buf, end_at)
        except asyncio.CancelledError:
            if not sse:  # left before a stream began, or a plain reply: the server may still be generating
                self._suspect = True
            raise
        except (httpx.ConnectError, httpx.ConnectTimeout) as e:
            raise Retryable(f"cannot connect to {self.url} ({http_why(e)})") from e
        except httpx.RemoteProtocolError as e:
            if guard.text and (finish or cut):
                pass  # the server closed right after the end: the reply is whole
            else:
                raise Retryable(f"{self.url} closed the connection mid-reply ({http_why(e)})") from e
        except httpx.HTTPError as e:
            raise Retryable(f"HTTP error talking to {self.url}: {http_why(e)}") from e
        if not guard.text and finish is None and cut is None:
            # a stream that ends with no token and no finish reason was interrupted (llama-cpp-python's
            # server ends a running stream when another request arrives): ask again, not the model's fault
            raise Retryable(f"{self.url} ended the stream before any token (interrupted)")
        completion = int(usage.get("completion_tokens") or 0) or guard.tokens
        return ChatResult(
            text=guard.text, finish_reason=finish if cut is None else "length",
            prompt_tokens=int(usage.get("prompt_tokens") or 0) or _estimate_prompt(body),
            completion_tokens=completion, latency_s=time.monotonic() - t0, model=model, cut=cut,
            cost=reported_cost(usage, r.headers),
        )

    def _parse_whole(self, raw: str, role: str, t0: float, headers: Any = None) -> ChatResult:
        try:
            data = json.loads(raw)
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
                latency_s=time.monotonic() - t0, model=str(data.get("model") or self.model),
                cost=reported_cost(usage, headers),
            )
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
            raise self._not_openai(raw, role) from e

    @property
    def idle_wait_s(self) -> float:
        return float(self._cfg.idle_wait_s)

    async def wait_until_idle(self, *, role: str = "runtime") -> None:
        """Wait (bounded by idle_wait_s) as after a timed-out call of ours: for a preflight that found
        the server up but busy with a generation another process abandoned."""
        self._suspect = True
        await self.wait_idle(role=role)

    async def wait_idle(self, *, role: str = "runtime") -> None:
        """After a timeout: wait (bounded by idle_wait_s) until the endpoint answers a one-token
        completion, so a re-ask never queues behind an abandoned generation."""
        async with self._idle_lock:
            if not self._suspect:
                return
            self.idle_checks += 1
            end_at = time.monotonic() + self._cfg.idle_wait_s
            body = {"model": self.model or "default", "max_tokens": 1, "temperature": 0.0, "stream": False,
                    "messages": [{"role": "user", "content": "ok"}]}
            last = ""
            while True:
                left = end_at - time.monotonic()
                if left <= 0:
                    raise LLMUnavailable(
                        f"{self.url} is still busy {self._cfg.idle_wait_s:g} s after a timed-out call",
                        role=role, url=self.url, model=self.model,
                        said=f"no one-token completion within {self._cfg.idle_wait_s:g} s ({last or 'busy'})",
                        fix="the server keeps generating abandoned replies: restart it, or use a faster model")
                try:
                    r = await self._http.post("/chat/completions", json=body, timeout=httpx.Timeout(
                        left, connect=min(self._cfg.connect_timeout_s, left)),
                        headers={"X-Agentui-Role": "runtime"})
                    if r.status_code < 500:
                        self._suspect = False
                        return
                    last = f"HTTP {r.status_code}"
                except httpx.HTTPError as e:
                    last = type(e).__name__
                await asyncio.sleep(min(0.5, max(0.0, end_at - time.monotonic())))

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


class EndpointSlots:
    """At most `n` calls in flight on one endpoint; one semaphore per event loop (tests and the CLI
    may run several loops in one process)."""

    def __init__(self, n: int) -> None:
        self.n = max(1, int(n))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sem: asyncio.Semaphore | None = None

    def get(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._loop is not loop:
            self._loop, self._sem = loop, asyncio.Semaphore(self.n)
        return self._sem


def tell(sink: Callable[[str], None], delta: str) -> None:
    """Hand a piece of the reply to its watcher; a broken watcher never breaks the call."""
    try:
        sink(delta)
    except Exception:  # noqa: BLE001 - the watcher is a display, the reply is what matters
        pass


class _NoStream(Exception):
    """The server refused `stream: true`: ask again without it (remembered per endpoint)."""


async def _read_bounded(r: httpx.Response, end_at: float, cap: int = 1 << 20) -> bytes:
    out = b""
    async with asyncio.timeout(max(0.1, end_at - time.monotonic())):
        async for chunk in r.aiter_bytes():
            out += chunk
            if len(out) > cap:
                break
    return out


USAGE_WAIT_S = 0.3  # after a complete value: how long the usage chunk is waited for
USAGE_EVENTS = 16  # … and how many more events are read for it (a model still generating is left)


async def _usage_after(it: Any, rest: list[str], buf: str, end_at: float) -> dict[str, Any]:
    """The usage of a stream left at its value's end, when the server sends it within a moment:
    the events already received, then a few more; text in them is not read (the reply is complete)."""
    stop = min(end_at, time.monotonic() + USAGE_WAIT_S)
    seen = 0
    events = list(rest)
    while True:
        for ev in events:
            seen += 1
            if ev.strip() == "[DONE]":
                return {}
            with contextlib.suppress(ValueError):
                for _delta, _fin, use in chunk_fields(json.loads(ev)):
                    if use:
                        return dict(use)
        left = stop - time.monotonic()
        if seen >= USAGE_EVENTS or left <= 0:
            return {}
        try:
            piece = await asyncio.wait_for(anext(it), timeout=left)
        except (StopAsyncIteration, TimeoutError, httpx.HTTPError):
            return {}
        events, buf = sse_events(buf + piece)


MAX_COST = 1000.0  # US dollars for one call: a larger "cost" is not one, and is not shown


def reported_cost(usage: Any, headers: Any = None) -> float | None:
    """The call's cost in US dollars when the endpoint reported one: `usage.cost` (OpenRouter, whose
    credits are dollars) or LiteLLM's `x-litellm-response-cost` header; else None (never estimated
    from token counts and a price list)."""
    values = [usage.get("cost") if isinstance(usage, dict) else None]
    if headers is not None:
        values.append(headers.get("x-litellm-response-cost"))
    for value in values:
        if isinstance(value, bool) or value is None:
            continue
        try:
            cost = float(value)
        except (TypeError, ValueError):
            continue
        if 0.0 <= cost <= MAX_COST:  # NaN and negatives fail this too
            return cost
    return None


def _estimate_prompt(body: dict[str, Any]) -> int:
    return max(1, sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4)


def _said(body: str) -> str:
    """What the server said, short: the `error.message` of a JSON error body, else the text."""
    try:
        data = json.loads(body)
        err = data.get("error", data) if isinstance(data, dict) else data
        msg = err.get("message") or err.get("detail") or err if isinstance(err, dict) else err
        text = msg if isinstance(msg, str) else json.dumps(msg, ensure_ascii=False)
    except (ValueError, AttributeError):
        text = body
        if re.match(r"\s*<(!doctype|html|head|body)", body, re.I):  # a proxy's error page: its title, no markup
            title = re.search(r"<title[^>]*>(.*?)</title>", body, re.I | re.S)
            text = f"an HTML page: {title.group(1)}" if title else "an HTML page: " + re.sub(r"<[^>]*>", " ", body)
    return " ".join(text.split())[:200]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
