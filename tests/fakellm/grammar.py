"""Which JSON schemas llama-cpp-python's server turns into a grammar (#13).

`llama_cpp.server` takes `{"type": "json_object", "schema": …}` and converts the schema with its
copy of llama.cpp's `json_schema_to_grammar` (`SchemaConverter.visit`). A node the converter does
not recognise raises, and the server then falls back *silently* to the generic JSON grammar: the
reply is any JSON value, so a required field is not enforced. `enforceable` mirrors visit()'s
branches (llama-cpp-python 0.3.x) so tests can tell which case a request is in without the model.
"""

from __future__ import annotations

from typing import Any

PRIMITIVES = frozenset({"boolean", "number", "integer", "string", "null", "object", "array", "value"})


def unrecognised(schema: Any, where: str = "root") -> str | None:
    """The first node the converter would refuse ("where: node"), or None when it converts."""
    if not isinstance(schema, dict):
        return f"{where}: {schema!r}"
    kind = schema.get("type")
    if "$ref" in schema:
        return None  # resolved by the converter; our schemas inline every $ref
    if "oneOf" in schema or "anyOf" in schema:
        for i, alt in enumerate(schema.get("oneOf") or schema["anyOf"]):
            bad = unrecognised(alt, f"{where}|{i}")
            if bad:
                return bad
        return None
    if isinstance(kind, list):
        return next((f"{where}: type {t!r}" for t in kind if t not in PRIMITIVES), None)
    if "const" in schema or "enum" in schema:
        return None
    if kind in (None, "object") and ("properties" in schema or (
            "additionalProperties" in schema and schema["additionalProperties"] is not True)):
        for name, sub in (schema.get("properties") or {}).items():
            bad = unrecognised(sub, f"{where}.{name}")
            if bad:
                return bad
        return None
    if kind in (None, "object") and "allOf" in schema:
        return None
    if kind in (None, "array") and ("items" in schema or "prefixItems" in schema):
        items = schema.get("items") or schema["prefixItems"]
        for i, sub in enumerate(items if isinstance(items, list) else [items]):
            bad = unrecognised(sub, f"{where}[{i}]")
            if bad:
                return bad
        return None
    if kind in (None, "string") and ("pattern" in schema or "format" in schema):
        return None
    if kind == "object" or len(schema) == 0:
        return None
    if kind in PRIMITIVES:
        return None
    return f"{where}: {schema!r}"


def enforceable(schema: Any) -> bool:
    return unrecognised(schema) is None
