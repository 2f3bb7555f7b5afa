"""LLM access: OpenAI-compatible HTTP client, JSON extraction, optional local llama.cpp provider."""

from agentui.llm.client import (
    ChatResult,
    HttpBackend,
    LLMClient,
    LLMError,
    LLMHTTPError,
    LLMNotConfigured,
    LLMParseError,
    LLMPool,
    LLMUnavailable,
    PreflightResult,
    Provider,
    RoleUsage,
    normalise_base_url,
    preflight_backend,
    resolve_provider,
)
from agentui.llm.jsonextract import Extracted, JSONExtractError, extract_json, strip_think

__all__ = [
    "ChatResult", "Extracted", "HttpBackend", "JSONExtractError", "LLMClient", "LLMError",
    "LLMHTTPError", "LLMNotConfigured", "LLMParseError", "LLMPool", "LLMUnavailable",
    "PreflightResult", "Provider", "RoleUsage", "extract_json", "normalise_base_url",
    "preflight_backend", "resolve_provider", "strip_think",
]
