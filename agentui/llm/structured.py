"""Structured output: response_format dialects, the schema in the prompt, error descriptions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from agentui.llm.base import Message
from agentui.llm.schema import compact_schema_text, schema_for

Enums = Mapping[str, Sequence[str]] | None

# response_format dialects, strongest first (DESIGN §4)
FORMAT_MODES = ("json_schema", "json_object_schema", "json_object", "prompt")


def response_format_for(mode: str, model: type[BaseModel], enums: Enums = None) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": model.__name__, "schema": schema_for(model, enums), "strict": False},
        }
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema_for(model, enums)}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _with_schema(messages: Sequence[Message], model: type[BaseModel], enums: Enums = None) -> list[Message]:
    """The schema goes into the prompt anyway (DESIGN §4): the system message, or a new one."""
    note = (
        "Reply with exactly one JSON object and nothing else, matching this JSON schema:\n"
        + compact_schema_text(model, enums)
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
