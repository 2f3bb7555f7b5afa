"""Reading a server's form (MCP form-mode elicitation) and checking answers against it."""

from __future__ import annotations

import pytest

from agentui.mcp.elicit import content_of, fields_of, schema_of


def test_the_four_kinds_and_their_limits_are_read() -> None:
    fields = fields_of({"type": "object", "required": ["who"], "properties": {
        "who": {"type": "string", "title": "Who", "maxLength": 5},
        "n": {"type": "integer", "minimum": 1, "maximum": 3, "default": 2},
        "ok": {"type": "boolean", "default": True},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small"]}}})
    assert [(f.name, f.kind, f.required, f.default) for f in fields] == [
        ("who", "string", True, None), ("n", "integer", False, 2), ("ok", "boolean", False, True),
        ("size", "enum", False, None)]
    assert fields[3].options == [("s", "Small"), ("m", "m")]  # a missing label is the value
    assert content_of(fields, {"who": "Ann", "n": "3", "ok": "no", "size": "Small"}) == (
        {"who": "Ann", "n": 3, "ok": False, "size": "s"}, {})
    assert content_of(fields, {"who": "Annabel", "n": "9", "size": "xl"})[1] == {
        "who": "at most 5 characters", "n": "at most 3", "size": "pick one of Small, m"}
    assert content_of(fields, {"n": ""})[1] == {"who": "required"}  # an empty optional field is left out


@pytest.mark.parametrize("schema, why", [
    ({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}, "'array'"),
    ({"type": "object", "properties": {"o": {"type": "object"}}}, "'object'"),
    ({"type": "array"}, "not an object"),
    ({"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(21)}}, "21 fields"),
])
def test_a_form_outside_form_mode_is_refused_with_the_reason(schema, why) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=why):
        fields_of(schema)


def test_text_from_the_server_is_made_visible_and_the_schema_passed_on_is_rebuilt() -> None:
    [f] = fields_of({"type": "object", "properties": {"x": {"type": "string", "title": "a\x1b[31mred", "pattern": ".*",
                                                            "oneOf": [{"const": "1", "title": "One"}]}}})
    assert "\x1b" not in f.title
    assert schema_of([f]) == {"type": "object", "required": [], "properties": {
        "x": {"type": "string", "title": f.title, "oneOf": [{"const": "1", "title": "One"}]}}}
