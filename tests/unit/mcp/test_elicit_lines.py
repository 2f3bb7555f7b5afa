"""The form asked line by line (`agentui run` on a terminal)."""

from __future__ import annotations

from agentui.mcp.elicit import Elicitation, ask_in_lines, fields_of

FORM = {"type": "object", "required": ["who"], "properties": {
    "who": {"type": "string"}, "n": {"type": "integer", "maximum": 3, "default": 1},
    "note": {"type": "string"}, "ok": {"type": "boolean"}}}


async def _ask(lines: list[str]):  # noqa: ANN202
    said: list[str] = []
    asked: list[str] = []

    async def read(prompt: str) -> str:
        asked.append(prompt)
        return lines.pop(0)

    answer = await ask_in_lines(Elicitation("s", "Who?", fields_of(FORM)), read, said.append)
    return answer, asked, said


async def test_each_field_until_it_fits_then_send() -> None:
    answer, asked, said = await _ask(["", "Ann", "7", "", "", "maybe", "y", "y"])
    assert (answer.action, answer.content) == ("accept", {"who": "Ann", "n": 1, "ok": True})
    assert said[1:] == ["    required", "    at most 3", "    answer yes or no"]
    assert asked[0] == "  who (required) [string]: " and asked[2] == "  n [integer, empty = 1]: "


async def test_no_declines_and_anything_else_cancels() -> None:
    assert (await _ask(["Bo", "", "", "", "n"]))[0].action == "decline"
    assert (await _ask(["Bo", "", "", "", "later"]))[0].action == "cancel"
