"""The test LLM: a real OpenAI-compatible HTTP server with scripted replies and fault injection."""

from tests.fakellm.server import FAULTS, FakeLLM, Reply

__all__ = ["FAULTS", "FakeLLM", "Reply"]
