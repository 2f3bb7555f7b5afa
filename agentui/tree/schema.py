"""The tree's JSON Schema (written to `.agentui/state/schema.json`) and a small validator for it.

Only the keywords the schema uses are interpreted (type, required, properties,
additionalProperties=false, items, minimum, minLength, maxLength, pattern, local $ref): the
dependency list has no JSON Schema library and this schema is ours. Every error is collected.
"""

from __future__ import annotations

import re
from typing import Any

SCHEMA_ID = "https://agentui.dev/schemas/tree/v1.json"

MAX_ID_LEN = 64  # the pattern below: 1 + 63
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
MAX_CHILDREN = 8  # children per decomposition: the tree planner's reply schema (maxItems) and config bound

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": SCHEMA_ID,
    "title": "agentui goal tree (v1)",
    "$ref": "#/$defs/node",
    "$defs": {
        "node": {
            "type": "object",
            "additionalProperties": False,
            "required": ["id", "order", "title", "goal", "acceptance", "passes", "attempts",
                         "max_attempts", "children"],
            "properties": {
                "id": {"type": "string", "pattern": ID_PATTERN},
                "order": {"type": "integer"},
                "title": {"type": "string", "minLength": 1, "maxLength": 200},
                "goal": {"type": "string"},
                "acceptance": {"type": "array", "items": {"type": "string"}},
                "passes": {"type": "boolean"},
                "attempts": {"type": "integer", "minimum": 0},
                "max_attempts": {"type": "integer", "minimum": 0},
                "guard": {"type": "string", "minLength": 1},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
        }
    },
}

_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            raise ValueError(f"unsupported $ref {ref!r}")
        node: Any = root
        for part in ref[2:].split("/"):
            node = node[part]
        schema = node
    return schema


def _where(path: str) -> str:
    return path or "$"


def schema_errors(doc: Any, schema: dict[str, Any] = SCHEMA) -> list[str]:
    """Every violation as `<json path>: <problem>`, sorted."""
    errors: list[str] = []
    _check(doc, schema, schema, "$", errors)
    return sorted(set(errors))


def _check(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str, errors: list[str]) -> None:
    schema = _resolve(schema, root)
    want = schema.get("type")
    if want is not None and not _TYPES[want](value):
        errors.append(f"{path}: expected {want}, got {_json_type(value)}")
        return
    if want == "object":
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing required field '{key}'")
        for key, sub in value.items():
            if key in props:
                _check(sub, props[key], root, f"{path}.{key}", errors)
            elif schema.get("additionalProperties", True) is False:
                errors.append(f"{path}: unknown field '{key}' (additionalProperties is false)")
    elif want == "array" and "items" in schema:
        for i, item in enumerate(value):
            _check(item, schema["items"], root, f"{path}[{i}]", errors)
    elif want == "string":
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path}: must not be empty" if schema.get("minLength") == 1
                          else f"{path}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
    elif want == "integer" and "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: {value} is below the minimum {schema['minimum']}")


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"
