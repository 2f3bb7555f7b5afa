"""What every LLM module shares: the error types, one chat result, the backend protocol.

A separate module so the HTTP and in-process backends and the client import it, not each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agentui.contracts import LLMUsage

Message = dict[str, str]

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


class Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
