"""JSON schemas for structured output: pydantic's schema with every `$ref` inlined and titles
dropped (DESIGN §4: several servers reject `$defs`; titles only cost prompt tokens)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel


def flatten_schema(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs", {}) or schema.get("definitions", {})

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = ref.rsplit("/", 1)[-1]
                if name in seen:  # recursive model: stop at a permissive object
                    return {"type": "object"}
                target = resolve(defs.get(name, {}), (*seen, name))
                extra = {k: v for k, v in node.items() if k != "$ref"}
                return {**target, **resolve(extra, seen)}
            return {
                k: resolve(v, seen)
                for k, v in node.items()
                if k not in ("$defs", "definitions", "title")
            }
        if isinstance(node, list):
            return [resolve(v, seen) for v in node]
        return node

    flat: dict[str, Any] = resolve(schema, ())
    return flat


@lru_cache(maxsize=256)
def _schema_json(model: type[BaseModel]) -> str:
    return json.dumps(flatten_schema(model.model_json_schema()), sort_keys=True)


# Every array and string of a reply schema is bounded, so a grammar-constrained model cannot
# loop inside one (the planner's `tools` list repeated for 700 tokens). Limits by field name, sized
# to what the roles keep (the planner truncates intents to 500 chars, criteria to 300, …).
# llama.cpp expands maxLength into one nested rule per character and refuses (llama-cpp-python's
# server aborts) somewhere between 1,000 and 1,500: no string limit may come near it.
MAX_ITEMS = 8
MAX_LENGTH = 400
GRAMMAR_SAFE_LENGTH = 600
LENGTHS = {
    "intent": 300, "criterion": 200, "context": 400, "evidence": 240, "what_to_do": 200,
    "summary": 400, "reply": 600, "question": 200, "scope": 200, "output": 600, "tool": 64,
    "merged_output": 600,
}
#: a node with none of these is one llama.cpp's schema converter refuses, and llama-cpp-python's
#: server then silently falls back to generic JSON for the WHOLE reply (an `Any` field whose schema
#: is only `{"default": ""}` would leave every other field unenforced)
_TYPED = ("type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "items", "pattern")
ANY_JSON = ["string", "number", "boolean", "object", "array", "null"]


def bound_schema(schema: dict[str, Any], enums: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """`schema` with maxItems / maxLength on every unbounded array / string, and `enums`
    (field name → allowed values, e.g. the real tool names) applied to strings and string lists."""
    enums = enums or {}

    def walk(node: Any, name: str) -> Any:
        if not isinstance(node, dict):
            return node
        node = dict(node)
        for key in ("anyOf", "oneOf", "allOf"):
            if isinstance(node.get(key), list):
                node[key] = [walk(x, name) for x in node[key]]
        if isinstance(node.get("properties"), dict):
            node["properties"] = {k: walk(v, k) for k, v in node["properties"].items()}
        if name and not any(k in node for k in _TYPED):
            node["type"] = list(ANY_JSON)  # a typeless field (pydantic's Any): any JSON value, said so
        kind = node.get("type")
        if kind == "array":
            if name in enums and enums[name]:
                node["items"] = {"type": "string", "enum": list(dict.fromkeys(enums[name]))}
                node["uniqueItems"] = True
            else:
                node["items"] = walk(node.get("items", {}), name)
            node.setdefault("maxItems", MAX_ITEMS)
        elif kind == "string":
            if name in enums and enums[name] and "enum" not in node:
                node["enum"] = list(dict.fromkeys(enums[name]))
            if "enum" not in node and "pattern" not in node:
                node["maxLength"] = min(node.get("maxLength", LENGTHS.get(name, MAX_LENGTH)), GRAMMAR_SAFE_LENGTH)
        return node

    bounded: dict[str, Any] = walk(schema, "")
    return bounded


def schema_for(model: type[BaseModel], enums: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """The flattened, bounded schema of `model` (a fresh copy each call)."""
    return bound_schema(json.loads(_schema_json(model)), enums)


def compact_schema_text(model: type[BaseModel], enums: Mapping[str, Sequence[str]] | None = None) -> str:
    """The schema as compact JSON for the prompt."""
    return json.dumps(schema_for(model, enums), separators=(",", ":"), ensure_ascii=False)
