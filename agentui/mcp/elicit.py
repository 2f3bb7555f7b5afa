"""A server's `elicitation/create` request: the form it asks the user to fill, and the answer.

MCP's form mode restricts `requestedSchema` to a flat object whose properties are strings,
numbers, integers, booleans or single-choice enums; this module reads such a schema into
:class:`Field`s a front end can show, checks the user's values against it, and answers
`accept` (with the values), `decline` or `cancel`. Where nobody can be asked (`agentui run`
without a terminal, an editor that declares no ACP elicitation) the answer is `decline`, and the
reason is logged. URL mode (open a web page for the user) is declined: agentui opens nothing
on a server's behalf. No SDK import here: client.py turns this into the SDK's types.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agentui.tools.safety.display import sanitize

MAX_FIELDS = 20  # a form longer than this is not a question a person answers in a modal
MAX_TEXT = 2000  # characters kept of a server's message, a title or a description
MAX_VALUE = 10_000  # characters of one string answer

KINDS = ("string", "number", "integer", "boolean", "enum")


@dataclass
class Field:
    name: str
    kind: str  # one of KINDS
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    options: list[tuple[str, str]] = field(default_factory=list)  # enum: (value, label)
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str = ""  # string: email, uri, date, date-time

    @property
    def label(self) -> str:
        return self.title or self.name


@dataclass
class Elicitation:
    """One request, as a front end shows it."""

    server: str
    message: str
    fields: list[Field]


@dataclass
class Answer:
    action: str  # accept, decline or cancel
    content: dict[str, Any] | None = None


# an async front end: the request in, the user's answer out
Asker = Callable[[Elicitation], Awaitable[Answer]]


def clean(text: Any, limit: int = MAX_TEXT) -> str:
    """A server's text with control characters made visible, bounded."""
    out = sanitize(str(text or ""))
    return out if len(out) <= limit else out[: limit - 1] + "…"


def fields_of(schema: Any) -> list[Field]:
    """The form's fields; ValueError (naming the field) for a schema form mode does not allow."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError("the requested schema is not an object")
    props = schema.get("properties") or {}
    if not isinstance(props, dict):
        raise ValueError("the requested schema's properties are not an object")
    if len(props) > MAX_FIELDS:
        raise ValueError(f"it asks for {len(props)} fields (at most {MAX_FIELDS})")
    required = schema.get("required") or []
    if not isinstance(required, list):
        required = []
    out = []
    for name, prop in props.items():
        if not isinstance(name, str) or not re.match(r"^[A-Za-z0-9_.-]{1,64}$", name):
            raise ValueError(f"a field name is not usable: {clean(name, 60)!r}")
        if not isinstance(prop, dict):
            raise ValueError(f"field {name!r} has no schema")
        out.append(_field(name, prop, name in required))
    return out


def _field(name: str, prop: dict[str, Any], required: bool) -> Field:
    kind = prop.get("type")
    f = Field(name, "", clean(prop.get("title"), 200), clean(prop.get("description")), required)
    if kind == "string" and isinstance(prop.get("enum"), list):
        values = [str(v) for v in prop["enum"]]
        names = prop.get("enumNames") if isinstance(prop.get("enumNames"), list) else []
        labels = [str(n) for n in names[: len(values)]] + values[len(names):]  # a missing label: the value
        f.kind, f.options = "enum", [(v, clean(lb, 200)) for v, lb in zip(values, labels, strict=True)]
    elif kind == "string" and isinstance(prop.get("oneOf"), list):
        opts = [(str(o["const"]), clean(o.get("title") or o["const"], 200)) for o in prop["oneOf"]
                if isinstance(o, dict) and "const" in o]
        if len(opts) != len(prop["oneOf"]):
            raise ValueError(f"field {name!r}: a choice has no `const`")
        f.kind, f.options = "enum", opts
    elif kind in ("string", "number", "integer", "boolean"):
        f.kind = kind
    else:  # arrays (multi-select) and nested objects are not in what a modal asks here
        raise ValueError(f"field {name!r} is of type {clean(kind, 40)!r}, which agentui does not ask for")
    if f.kind == "enum" and not f.options:
        raise ValueError(f"field {name!r} offers no choice")
    for key, attr in (("minimum", "minimum"), ("maximum", "maximum")):
        if isinstance(prop.get(key), int | float) and not isinstance(prop.get(key), bool):
            setattr(f, attr, float(prop[key]))
    for key, attr in (("minLength", "min_length"), ("maxLength", "max_length")):
        if isinstance(prop.get(key), int) and not isinstance(prop.get(key), bool):
            setattr(f, attr, prop[key])
    if f.kind == "string" and isinstance(prop.get("format"), str):
        f.format = prop["format"][:20]
    default = prop.get("default")
    if default is not None:
        try:
            f.default = value_of(f, default if f.kind == "boolean" else str(default))
        except ValueError:
            f.default = None  # a default that breaks its own schema is not offered
    return f


def value_of(f: Field, raw: Any) -> Any:
    """One answer as its schema's type; ValueError says what is wrong, in the user's words."""
    if f.kind == "boolean":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("y", "yes", "true", "1"):
            return True
        if text in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer yes or no")
    text = str(raw)
    if f.kind == "enum":
        for value, label in f.options:
            if text in (value, label):
                return value
        raise ValueError("pick one of " + ", ".join(label for _, label in f.options))
    if f.kind in ("number", "integer"):
        try:
            num: float | int = int(text.strip()) if f.kind == "integer" else float(text.strip())
        except ValueError:
            raise ValueError("a whole number" if f.kind == "integer" else "a number") from None
        if isinstance(num, float) and not math.isfinite(num):
            raise ValueError("a finite number")
        if f.minimum is not None and num < f.minimum:
            raise ValueError(f"at least {f.minimum:g}")
        if f.maximum is not None and num > f.maximum:
            raise ValueError(f"at most {f.maximum:g}")
        return num
    if len(text) > MAX_VALUE:
        raise ValueError(f"at most {MAX_VALUE} characters")
    if f.min_length is not None and len(text) < f.min_length:
        raise ValueError(f"at least {f.min_length} characters")
    if f.max_length is not None and len(text) > f.max_length:
        raise ValueError(f"at most {f.max_length} characters")
    if f.format == "email" and not re.match(r"^[^@\s]+@[^@\s]+$", text):
        raise ValueError("an email address")
    return text


def content_of(fields: list[Field], raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(content, problems by field name): an empty answer leaves an optional field out."""
    content: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for f in fields:
        value = raw.get(f.name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if f.required:
                problems[f.name] = "required"
            continue
        try:
            content[f.name] = value_of(f, value)
        except ValueError as e:
            problems[f.name] = str(e)
    return content, problems


async def respond(server: str, mode: str, message: str, schema: Any, url: str,
                  ask: Asker | None, why_not: str, log: Callable[[str], None]) -> Answer:
    """The answer to one request: the front end's (`ask`), else `decline` with a logged reason."""
    said = clean(message, 200)
    if mode == "url":
        log(f"MCP server '{server}' asked you to open {clean(url, 200)} ({said}); agentui opens no page for a "
            "server: declined")
        return Answer("decline")
    try:
        fields = fields_of(schema)
    except ValueError as e:
        log(f"MCP server '{server}' asked for input ({said}) in a form agentui cannot show: {e}; declined")
        return Answer("decline")
    if ask is None:
        log(f"MCP server '{server}' asked for input ({said}); {why_not}: declined")
        return Answer("decline")
    answer = await ask(Elicitation(server, clean(message), fields))
    if answer.action != "accept":
        return Answer("cancel" if answer.action == "cancel" else "decline")
    content, problems = content_of(fields, answer.content or {})
    if problems:  # a front end checks as the user types; what still does not fit is not sent
        log(f"MCP server '{server}': the answer does not fit its form ({problems}); cancelled")
        return Answer("cancel")
    return Answer("accept", content)


async def ask_in_lines(req: Elicitation, read: Callable[[str], Awaitable[str]],
                       say: Callable[[str], None]) -> Answer:
    """The form one line at a time (a terminal without the UI): each field until its answer fits,
    an empty line keeps the default or leaves an optional field out; then send, decline or cancel."""
    say(f"MCP server '{req.server}' asks you (what you send goes to that server): {req.message}")
    values: dict[str, Any] = {}
    for f in req.fields:
        hint = {"boolean": "y/n", "enum": " / ".join(label for _, label in f.options)}.get(f.kind, f.kind)
        if f.default is not None:
            hint += f", empty = {f.default}"
        elif not f.required:
            hint += ", empty = leave out"
        while True:
            raw = (await read(f"  {f.label}{' (required)' if f.required else ''} [{hint}]: ")).strip()
            if not raw:
                if f.default is not None:
                    values[f.name] = f.default
                elif f.required:
                    say("    required")
                    continue
                break
            try:
                values[f.name] = value_of(f, raw)
                break
            except ValueError as e:
                say(f"    {e}")
    choice = (await read("  send it? [y]es, [n]o (decline), [c]ancel: ")).strip().lower()
    if choice in ("y", "yes"):
        return Answer("accept", values)
    return Answer("decline" if choice in ("n", "no") else "cancel")


def schema_of(fields: list[Field]) -> dict[str, Any]:
    """The form again as a form-mode JSON schema, from the checked fields only (what is passed on
    to an editor that shows forms: nothing of the server's schema beyond what was understood)."""
    props: dict[str, Any] = {}
    for f in fields:
        p: dict[str, Any] = {"type": "string" if f.kind == "enum" else f.kind}
        if f.title:
            p["title"] = f.title
        if f.description:
            p["description"] = f.description
        if f.kind == "enum":
            p["oneOf"] = [{"const": v, "title": label} for v, label in f.options]
        for key, value in (("minimum", f.minimum), ("maximum", f.maximum), ("minLength", f.min_length),
                           ("maxLength", f.max_length)):
            if value is not None:
                p[key] = int(value) if key in ("minLength", "maxLength") or f.kind == "integer" else value
        if f.format:
            p["format"] = f.format
        if f.default is not None:
            p["default"] = f.default
        props[f.name] = p
    return {"type": "object", "properties": props, "required": [f.name for f in fields if f.required]}
