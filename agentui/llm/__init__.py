"""LLM access: OpenAI-compatible HTTP client, JSON extraction, optional local llama.cpp provider."""

from agentui.llm.base import (
    ChatResult,
    LLMError,
    LLMHTTPError,
    LLMNotConfigured,
    LLMParseError,
    LLMUnavailable,
    RoleUsage,
)
from agentui.llm.client import LLMClient
from agentui.llm.http import HttpBackend, normalise_base_url
from agentui.llm.jsonextract import Extracted, JSONExtractError, extract_json, strip_think
from agentui.llm.pool import LLMPool, PreflightResult, Provider, preflight_backend, resolve_provider

__all__ = [
    "ChatResult", "Extracted", "HttpBackend", "JSONExtractError", "LLMClient", "LLMError",
    "LLMHTTPError", "LLMNotConfigured", "LLMParseError", "LLMPool", "LLMUnavailable",
    "PreflightResult", "Provider", "RoleUsage", "extract_json", "normalise_base_url",
    "preflight_backend", "resolve_provider", "strip_think",
]
