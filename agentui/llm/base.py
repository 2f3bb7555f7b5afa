"""What every LLM module shares: the error types, one chat result, the backend protocol.

A separate module so the HTTP and in-process backends and the client import it, not each other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from agentui.contracts import LLMUsage

Message = dict[str, str]

#: set by LLMClient.structured: the reply is one JSON value, so a stream may stop once it closes
EXPECT_JSON: ContextVar[bool] = ContextVar("agentui_expect_json", default=False)

#: set by LLMClient around one backend call when someone listens: told of each piece of the reply's
#: text as it is generated (on the event loop's thread), never of a reply that arrives whole
ON_DELTA: ContextVar[Callable[[str], None] | None] = ContextVar("agentui_on_delta", default=None)

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


class LLMInfraError(LLMError):
    """The endpoint failed, not the model's reply: the task ends with its own outcome — no
    replan, no Megram. `said` is what the server said; `fix` is what the user should do."""

    kind = "unavailable"

    def __init__(self, message: str, *, model: str = "", said: str = "", fix: str = "", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.model = model
        self.said = said
        self.fix = fix

    def describe(self) -> str:
        """One message: endpoint, model, what the server said, the fix."""
        head = f"LLM endpoint {self.url or '(none)'}" + (f", model {self.model!r}" if self.model else "")
        said = f": {self.said}" if self.said else f": {self}"
        fix = f" — fix: {self.fix}" if self.fix else ""
        return f"{head}{said}{fix}"

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "endpoint": self.url, "model": self.model, "role": self.role,
                "said": self.said or str(self), "fix": self.fix, "message": self.describe()}


class LLMUnavailable(LLMInfraError):
    """The endpoint did not answer (refused, reset, DNS, timeouts or 5xx/429 after retries)."""


class LLMHTTPError(LLMInfraError):
    """A non-retryable HTTP error (4xx other than 429)."""

    kind = "http"

    def __init__(self, message: str, *, status: int, body: str = "", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.status = status
        self.body = body
        self.kind = {401: "unauthorized", 403: "unauthorized", 404: "model_not_found"}.get(status, "http")


class LLMNotOpenAI(LLMInfraError):
    """The server answered, but not as an OpenAI-compatible chat completion."""

    kind = "not_openai"


class LLMNotConfigured(LLMInfraError):
    """No endpoint and no local model: says exactly what to set."""

    kind = "not_configured"


class LLMOutputError(LLMError):
    """The model answered but its reply is unusable — a failure of the model's output, not of the
    approach. `cut` says why: "invalid", "length" (finish_reason), "runaway:<how>", "deadline"."""

    def __init__(self, message: str, *, raw: str = "", cut: str = "invalid", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.raw = raw
        self.cut = cut


class LLMParseError(LLMOutputError):
    """The reply could not be turned into the requested value, even after one re-ask."""


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
    cut: str | None = None  # why the client stopped reading early: "runaway:<how>", "deadline"
    cost: float | None = None  # in US dollars, when the endpoint reported it (never estimated)


@dataclass
class RoleUsage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    parse_repairs: int = 0
    errors: int = 0
    parse_failures: int = 0
    runaways_cut: int = 0
    infra_failures: int = 0

    def add(self, u: LLMUsage) -> None:
        self.calls += 1
        self.prompt_tokens += u.prompt_tokens
        self.completion_tokens += u.completion_tokens
        self.seconds += u.latency_s
        self.parse_repairs += u.parse_repairs
        self.errors += 0 if u.ok else 1
        self.parse_failures += u.failure == "output"
        self.runaways_cut += bool(u.cut and u.cut.startswith(("runaway", "deadline")))
        self.infra_failures += u.failure == "infra"

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 3),
            "parse_repairs": self.parse_repairs,
            "errors": self.errors,
            "parse_failures": self.parse_failures,
            "runaways_cut": self.runaways_cut,
            "infra_failures": self.infra_failures,
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
