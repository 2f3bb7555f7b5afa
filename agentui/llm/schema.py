"""JSON schemas for structured output: pydantic's schema with every `$ref` inlined and titles
dropped (DESIGN §4: several servers reject `$defs`; titles only cost prompt tokens)."""

from __future__ import annotations

import json
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

    return resolve(schema, ())


@lru_cache(maxsize=256)
def _schema_json(model: type[BaseModel]) -> str:
    return json.dumps(flatten_schema(model.model_json_schema()), sort_keys=True)


def schema_for(model: type[BaseModel]) -> dict[str, Any]:
    """The flattened schema of `model` (a fresh copy each call)."""
    return json.loads(_schema_json(model))


def compact_schema_text(model: type[BaseModel]) -> str:
    """The schema as compact JSON for the prompt."""
    return json.dumps(schema_for(model), separators=(",", ":"), ensure_ascii=False)
