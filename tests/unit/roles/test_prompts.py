"""The roles' prompts are files read by one loader: each role's file is there, its example is its
last line, and filling a field substitutes text without evaluating anything."""

from __future__ import annotations

from importlib import resources

import pytest

from agentui.roles.prompts import Prompt, load, parse

#: each role that asks an LLM, and whether its prompt shows a one-line example reply
ROLES = {"perceiver": True, "planner": True, "executor": True, "agent_validator": True,
         "meta_validator": True, "tree_planner": False}


def test_every_prompt_file_is_a_role_s_and_loads() -> None:
    files = {f.name for f in resources.files("agentui.roles.prompts").iterdir() if f.name.endswith(".md")}
    assert files == {f"{r}.md" for r in ROLES}
    for role, has_example in ROLES.items():
        p = load(role)
        assert p.rules.startswith("You ") and not p.text.endswith("\n")
        assert bool(p.example) is has_example, role
        assert "\n" not in p.example and p.text.count("\nExample") == int(has_example), role


def test_the_example_is_the_last_line_only_when_it_is_one() -> None:
    assert parse("Do it.\nExample: {}\n") == Prompt(rules="Do it.", example="Example: {}")
    assert parse("Do it.\nExample: {}\n").text == "Do it.\nExample: {}"
    assert parse("Do it.\nThen stop.\n") == Prompt(rules="Do it.\nThen stop.", example="")
    assert parse("Example: a prompt of one line\n").example == ""  # a prompt is never only an example


def test_fields_are_substituted_never_evaluated() -> None:
    p = parse("Give 2 to $n children of {node} for $$5.\n")
    assert p.render(n=4) == "Give 2 to 4 children of {node} for $5."
    # a value is text: neither a field nor a format spec inside it is expanded
    assert p.render(n="$n {0.__class__}") == "Give 2 to $n {0.__class__} children of {node} for $5."
    with pytest.raises(KeyError):
        p.render()
    assert load("tree_planner").render(max_children=6).count("2 to 6 ordered children") == 1
