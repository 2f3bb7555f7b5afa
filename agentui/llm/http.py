"""The OpenAI-compatible HTTP backend: one `httpx.AsyncClient` per endpoint (DESIGN §4)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from agentui.config import LLMConfig
from agentui.llm.base import (
    ChatResult,
    LLMHTTPError,
    LLMNotOpenAI,
    LLMUnavailable,
    Message,
    ResponseFormatRejected,
    Retryable,
)


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
            raise Retryable(f"cannot connect to {self.url} ({type(e).__name__}: {e})") from e
        except httpx.TimeoutException as e:
            raise Retryable(f"no answer within {timeout.read:g} s (timeout)") from e
        except httpx.HTTPError as e:
            raise Retryable(f"HTTP error talking to {self.url}: {e}") from e
        latency = time.monotonic() - t0
        text = r.text
        if r.status_code == 429 or r.status_code >= 500:
            if response_format is not None and _looks_like_format_rejection(r.status_code, text):
                raise ResponseFormatRejected(text[:300], role=role, url=self.url)
            ra = _retry_after(r.headers.get("retry-after"))
            raise Retryable(f"HTTP {r.status_code} from {self.url}: {text[:200]}", ra)
        if r.status_code >= 400:
            if response_format is not None and _looks_like_format_rejection(r.status_code, text):
                raise ResponseFormatRejected(text[:300], role=role, url=self.url)
            hint = " (check AGENTUI_API_KEY)" if r.status_code in (401, 403) else ""
            raise LLMHTTPError(
                f"HTTP {r.status_code} from {self.url}{hint}: {text[:300]}",
                status=r.status_code, body=text, role=role, url=self.url, model=self.model,
                said=f"HTTP {r.status_code} {_said(text)}",
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
            raise LLMNotOpenAI(
                f"{self.url} sent a reply that is not an OpenAI chat completion: {text[:200]!r}",
                role=role, url=self.url, model=self.model, said=f"not a chat completion: {_said(text)}",
                fix="point AGENTUI_BASE_URL at an OpenAI-compatible /v1 endpoint",
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


def _said(body: str) -> str:
    """What the server said, short: the `error.message` of a JSON error body, else the text."""
    try:
        data = json.loads(body)
        err = data.get("error", data) if isinstance(data, dict) else data
        msg = err.get("message") or err.get("detail") or err if isinstance(err, dict) else err
        text = msg if isinstance(msg, str) else json.dumps(msg, ensure_ascii=False)
    except (ValueError, AttributeError):
        text = body
    return " ".join(text.split())[:200]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
