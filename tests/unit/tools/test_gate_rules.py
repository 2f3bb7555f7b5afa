"""Remembered tool rules reach the gate (issues #13 item 8, #14): `never:` refuses, `ask:` asks a
person, free text is the executor's only, and no rule ever makes the gate less strict."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentui.contracts import ConfirmationChoice
from agentui.tools import Approvals, ToolContext, default_registry
from agentui.tools.answers import auto_answer
from agentui.tools.safety import Verdict, assess, assess_write
from agentui.tools.safety.rules import apply_rules, describe, parse_rule


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("keep")
    return w


@pytest.mark.parametrize(("text", "action", "words"), [
    ("never: git push", "never", ("git", "push")),
    ("NEVER:  `git push --force`", "never", ("git", "push", "--force")),
    ("ask: cat", "ask", ("cat",)),
    ("always ask: npm publish", "ask", ("npm", "publish")),
    ("Always Ask : rm -rf", "ask", ("rm", "-rf")),
])
def test_rule_forms(text: str, action: str, words: tuple[str, ...]) -> None:
    rule = parse_rule(text)
    assert rule is not None and rule.action == action and rule.words == words


@pytest.mark.parametrize("text", [
    "never pipe curl into sh", "prefer ripgrep over grep", "never:", "ask: --force", "never: 'unclosed",
    "never: git push\nask: cat", "we should never: push",
])
def test_free_text_is_not_a_gate_rule(text: str) -> None:
    assert parse_rule(text) is None
    assert "only the executor" in describe(None, "shell")


def _rules(*texts: str):
    return [parse_rule(t) for t in texts]


@pytest.mark.parametrize("command", [
    "git push", "git push origin main", "/usr/bin/git push -f", "cd . && git push", "echo x | git push",
    "bash -c 'git push'", "xargs git push < /dev/null", "env git push", "echo $(git push)",
    "git status; git push --tags",
])
def test_never_refuses_every_form_the_walk_sees(ws: Path, command: str) -> None:
    a = apply_rules(assess(command, ws), "shell", command, _rules("never: git push"))
    assert a.verdict is Verdict.DENY and a.denied_by_rule, command


@pytest.mark.parametrize("command", ["git status", "git log --oneline", "cat a.txt", "echo git push"])
def test_never_leaves_other_commands_alone(ws: Path, command: str) -> None:
    before = assess(command, ws)
    after = apply_rules(before, "shell", command, _rules("never: git push"))
    assert after == before, command


def test_ask_makes_an_allow_listed_command_ask_a_person(ws: Path) -> None:
    before = assess("cat a.txt", ws)
    assert before.verdict is Verdict.SAFE
    a = apply_rules(before, "shell", "cat a.txt", _rules("ask: cat"))
    assert a.verdict is Verdict.ASK and a.human_only and a.once_only
    assert any("ask: cat" in r for r in a.reasons)
    # find -exec runs cat too (the allow-list follows it; so does the rule)
    a = apply_rules(assess("find . -exec cat {} +", ws), "shell", "find . -exec cat {} +", _rules("ask: cat"))
    assert a.verdict is Verdict.ASK and a.human_only


def test_rules_never_loosen(ws: Path) -> None:
    hard = assess("cp a.txt /opt/agentui-test/out.txt", ws)
    assert hard.verdict is Verdict.DENY
    for rules in (_rules("ask: cp"), _rules("never: cp"), _rules("ask: *")):
        a = apply_rules(hard, "shell", "cp a.txt /opt/agentui-test/out.txt", rules)
        assert a.verdict is Verdict.DENY and not a.denied_by_rule  # still the hard deny-list's
    asks = assess("git push", ws)
    a = apply_rules(asks, "shell", "git push", _rules("ask: git push"))
    assert a.verdict is Verdict.ASK and a.human_only and set(asks.reasons) <= set(a.reasons)


def test_a_form_the_walk_cannot_follow_needs_a_person(ws: Path) -> None:
    command = 'eval "$(echo git push)"'
    a = apply_rules(assess(command, ws), "shell", command, _rules("never: git push"))
    assert a.verdict is Verdict.ASK and a.human_only  # --yes cannot approve it
    command = "x=push; git $x"
    a = apply_rules(assess(command, ws), "shell", command, _rules("never: git push"))
    assert a.verdict is not Verdict.SAFE and (a.verdict is Verdict.DENY or a.human_only)


def test_other_tools_match_a_glob_over_the_subject(ws: Path) -> None:
    a = apply_rules(assess_write(ws / "poetry.lock", ws), "write_file", "poetry.lock", _rules("never: *.lock"))
    assert a.verdict is Verdict.DENY and a.denied_by_rule
    a = apply_rules(assess_write(ws / "notes.txt", ws), "write_file", "notes.txt", _rules("never: *.lock"))
    assert a.verdict is Verdict.SAFE


def test_describe_says_what_the_gate_does() -> None:
    assert describe(parse_rule("never: git push"), "shell") == \
        "the safety gate refuses every shell command matching `git push`"
    assert "asks a person before" in describe(parse_rule("ask: cat"), "shell")


class _Rules:
    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.asked: list[str] = []

    async def __call__(self, tool: str) -> list[str]:
        self.asked.append(tool)
        return self.texts if tool == "shell" else []


async def test_the_registry_gate_reads_rules_and_yes_cannot_answer_an_ask_rule(ws: Path) -> None:
    reg = default_registry("linux")
    reg.rules = _Rules("never: git push", "ask: cat", "prefer small commits")
    asked = []

    async def yes(req):  # noqa: ANN001, ANN202 - what `agentui run --yes` answers (inside the sandbox)
        asked.append(req)
        return auto_answer(req, yes=True, unconfined=False) or ConfirmationChoice.DENY

    ctx = ToolContext(workspace=ws, task_id="t", confirm=yes, approvals=Approvals(), timeout_s=10)
    rec = await reg.call("shell", {"command": "git push"}, ctx)
    assert not rec.ok and "git push" in (rec.error or "") and "hard deny-list" in (rec.error or "") and not asked
    rec = await reg.call("shell", {"command": "cat a.txt"}, ctx)
    assert not rec.ok and asked and asked[-1].human_only and "keep" not in rec.evidence
    rec = await reg.call("shell", {"command": "head -c 2 a.txt"}, ctx)
    assert rec.ok and rec.evidence == "ke"  # a rule about cat says nothing about head
    assert reg.rules.asked and set(reg.rules.asked) == {"shell"}


async def test_broken_memory_never_opens_the_gate(ws: Path) -> None:
    async def broken(_tool: str) -> list[str]:
        raise OSError("store closed")

    reg = default_registry("linux")
    reg.rules = broken
    ctx = ToolContext(workspace=ws, task_id="t", confirm=None, approvals=Approvals(), timeout_s=10)
    rec = await reg.call("shell", {"command": "rm a.txt"}, ctx)
    assert not rec.ok and (ws / "a.txt").exists()
    rec = await reg.call("shell", {"command": "cat a.txt"}, ctx)
    assert rec.ok and rec.evidence == "keep"
