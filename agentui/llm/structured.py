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
# the dialects that send the schema itself, which the server turns into a grammar: the prompt then
# carries only a one-line instruction, not the schema again (a quarter of all prompt tokens)
SCHEMA_MODES = frozenset({"json_schema", "json_object_schema"})
ONE_OBJECT = "Reply with exactly one JSON object and nothing else"


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


def schema_note(model: type[BaseModel], enums: Enums = None) -> str:
    return f"{ONE_OBJECT}, matching this JSON schema:\n{compact_schema_text(model, enums)}"


def _with_schema(messages: Sequence[Message], model: type[BaseModel], enums: Enums = None,
                 mode: str | None = None) -> list[Message]:
    """The reply's shape at the end of the system message (or a new one). The whole schema only
    where the server is not sent it (`mode` json_object or prompt, or unknown); a server sent the
    schema constrains the reply to it, and each role's prompt shows a one-line example."""
    note = f"{ONE_OBJECT}." if mode in SCHEMA_MODES else schema_note(model, enums)
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
