"""Classes a second held-out corpus (issue #14) found running unasked, each fixed as a class:
changes to existing files (append, touch, every brace/loop expansion), secrets in the environment,
secrets under an innocent name (private-key content, hard links), start-up files other tools run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentui.contracts import ConfirmationChoice
from agentui.tools import Approvals, ToolContext, default_registry
from agentui.tools.answers import auto_answer
from agentui.tools.safety import Verdict, assess, assess_read, assess_write

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKEKEY\n-----END OPENSSH PRIVATE KEY-----\n"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY)
    monkeypatch.setenv("HOME", str(home))
    w = tmp_path / "ws"
    w.mkdir()
    (w / "victim.txt").write_text("ORIGINAL\n")
    (w / "notes.md").write_text("hello\n")
    return w


@pytest.mark.parametrize("command", [
    "echo x >> notes.md", "printf x 1>>victim.txt", "echo x &>> victim.txt", "echo x | tee -a victim.txt",
    "touch victim.txt", "touch -d 2001-01-01 victim.txt", "echo x | tee {victim.txt,new.txt}",
    "for f in victim.txt new.txt; do echo x > $f; done", "for f in new.txt victim.txt; do echo x >> $f; done",
    "echo x > {new.txt,victim.txt}",
])
def test_changing_an_existing_file_asks(ws: Path, command: str) -> None:
    a = assess(command, ws)
    assert a.verdict is Verdict.ASK, command
    assert any("existing file" in r or "glob" in r or "brace" in r or "ambiguous" in r for r in a.reasons), a.reasons


@pytest.mark.parametrize("command", ["echo x >> new.txt", "touch new.txt", "echo x | tee -a new.txt",
                                     "echo x | tee new.txt", "mkdir -p sub && touch sub/x", "ls > out.txt"])
def test_creating_a_new_file_still_runs(ws: Path, command: str) -> None:
    assert assess(command, ws).verdict is Verdict.SAFE, command


@pytest.mark.parametrize("command", [
    "echo $GITHUB_TOKEN", 'echo "token=${GITHUB_TOKEN:-none}"', "printenv GITHUB_TOKEN", "env", "printenv",
    "env | grep -i path", "set", "export -p", "declare -x", "x=$GITHUB_TOKEN; echo $x", "echo ${!name}",
    "cat <<EOF\n$GITHUB_TOKEN\nEOF", "bash -c 'echo $GITHUB_TOKEN'", "echo $AGENTUI_API_KEY",
])
def test_secrets_in_the_environment_need_a_person(ws: Path, command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "FAKETOKEN")
    a = assess(command, ws)
    assert a.verdict is Verdict.ASK and a.human_only and a.once_only, (command, a)


@pytest.mark.parametrize(("var", "value"), [
    ("OPENAI_KEY", "not-shaped-like-anything"),  # named `…_KEY`
    ("CONF", "ghp_0123456789abcdefghijklmnopqrstuvwx"),  # an innocent name, a GitHub token's shape
    ("OPENAI", "sk-proj-0123456789abcdefghijkl"),
    ("HTTPS_PROXY", "http://alice:hunter2@proxy.example:3128"),  # a URL carrying a password
    ("SETTINGS", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----"),
])
@pytest.mark.parametrize("command", ["env", "printenv", "export -p", "echo $VAR", "printenv VAR"])
def test_a_secret_under_any_variable_name_needs_a_person(ws: Path, command: str, var: str, value: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Names alone miss secrets (`OPENAI_KEY`, a token in `CONF`): the value's shape counts too (#14)."""
    monkeypatch.setenv(var, value)
    a = assess(command.replace("VAR", var), ws)
    assert a.verdict is Verdict.ASK and a.human_only, (command, var, a)


def test_a_clean_environment_is_still_asked_for_but_not_of_a_person(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the whole environment back always asks; with no secret in it, --yes may answer."""
    for k in list(os.environ):
        if any(s in k.upper() for s in ("KEY", "TOKEN", "SECRET", "PASS", "AUTH", "CREDENTIAL", "SESSION", "PAT",
                                        "COOKIE", "DSN", "_URL", "_URI")):
            monkeypatch.delenv(k)
    listed = assess("env", ws)
    assert listed.verdict is Verdict.ASK and not listed.human_only
    assert assess("printenv PATH", ws).verdict is Verdict.SAFE and assess("echo $HOME $PWD", ws).verdict is Verdict.SAFE


async def test_tool_processes_never_get_agentuis_keys(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTUI_API_KEY", "FAKE-AGENT-KEY")
    monkeypatch.setenv("AGENTUI_BRAIN_API_KEY", "FAKE-BRAIN-KEY")

    async def person(_req):  # noqa: ANN001, ANN202 - a person says yes once
        return ConfirmationChoice.APPROVE

    ctx = ToolContext(workspace=ws, task_id="t", confirm=person, approvals=Approvals(), timeout_s=20)
    rec = await default_registry("linux").call("shell", {"command": "env; echo end"}, ctx)
    assert rec.ok and "end" in rec.evidence
    assert "FAKE-AGENT-KEY" not in rec.evidence and "FAKE-BRAIN-KEY" not in rec.evidence


async def test_yes_cannot_print_a_secret_variable(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "FAKETOKEN")
    asked = []

    async def yes(req):  # noqa: ANN001, ANN202 - `agentui run --yes --unconfined`
        asked.append(req)
        return auto_answer(req, yes=True, unconfined=True) or ConfirmationChoice.DENY

    ctx = ToolContext(workspace=ws, task_id="t", confirm=yes, approvals=Approvals(), timeout_s=20)
    rec = await default_registry("linux").call("shell", {"command": "echo $GITHUB_TOKEN"}, ctx)
    assert not rec.ok and "FAKETOKEN" not in rec.evidence and asked and asked[0].human_only


@pytest.mark.parametrize("setup", ["key_content", "hard_link"])
def test_a_secret_under_an_innocent_name_is_still_a_secret(ws: Path, setup: str) -> None:
    name = "deploy_key" if setup == "key_content" else "key"
    if setup == "key_content":
        (ws / name).write_text(KEY)
    else:
        os.link(Path(os.environ["HOME"]) / ".ssh" / "id_rsa", ws / name)
    assert assess(f"cat {name}", ws).verdict is Verdict.DENY
    assert assess(f"base64 {name}", ws).verdict is Verdict.DENY
    assert assess("grep -r FAKEKEY .", ws).verdict is Verdict.ASK  # a recursive read over it
    r = assess_read(ws / name, ws)
    assert r.verdict is Verdict.ASK and r.human_only


def test_ordinary_files_are_not_secrets(ws: Path) -> None:
    (ws / "README").write_text("-----BEGIN something else-----\n")
    (ws / "big").write_text("x" * 100_000)
    for c in ("cat README", "cat big", "cat victim.txt", "grep -r hello ."):
        assert assess(c, ws).verdict is Verdict.SAFE, c


@pytest.mark.parametrize("name", [".gdbinit", ".exrc", ".pdbrc", ".lldbinit", ".irbrc", "pyproject.toml",
                                  "Gemfile", "build.gradle", ".husky/pre-commit"])
def test_start_up_and_build_files_other_tools_run_ask(ws: Path, name: str) -> None:
    (ws / ".husky").mkdir()
    assert assess(f"echo x > {name}", ws).verdict is Verdict.ASK, name
    assert assess_write(ws / name, ws).verdict is Verdict.ASK, name


@pytest.mark.parametrize("command", ["tar --version", "zcat log.gz | head -3", "gzip -l log.gz", "gzip -dc log.gz",
                                     "gunzip -t log.gz", "ulimit -a", "umask", "timeout 5 ls",
                                     "nice -n 10 cat notes.md", "timeout -s KILL 5 git status"])
def test_everyday_readers_run_unasked(ws: Path, command: str) -> None:
    import gzip

    with gzip.open(ws / "log.gz", "wt") as fh:
        fh.write("x\n")
    assert assess(command, ws).verdict is Verdict.SAFE, command


@pytest.mark.parametrize("command", ["gzip log.gz", "gzip -d log.gz", "gunzip log.gz", "gzip -k notes.md",
                                     "umask 000", "timeout 5 rm notes.md", "nice python3 x.py",
                                     "timeout 5 sh -c 'rm notes.md'", "timeout 5 cat ~/.ssh/id_rsa"])
def test_their_writing_or_running_forms_still_ask(ws: Path, command: str) -> None:
    assert assess(command, ws).verdict is not Verdict.SAFE, command


async def test_a_hard_link_out_of_the_workspace_needs_a_person(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("ORIGINAL\n")
    os.link(outside, ws / "hard.txt")
    for command in ("echo pwn >> hard.txt", "echo pwn > hard.txt", "touch hard.txt"):
        a = assess(command, ws)
        assert a.verdict is Verdict.ASK and a.human_only, command

    async def yes(req):  # noqa: ANN001, ANN202 - `agentui run --yes` inside the sandbox
        return auto_answer(req, yes=True, unconfined=False) or ConfirmationChoice.DENY

    ctx = ToolContext(workspace=ws, task_id="t", confirm=yes, approvals=Approvals(), timeout_s=20)
    rec = await default_registry("linux").call("shell", {"command": "echo pwn >> hard.txt"}, ctx)
    assert not rec.ok and outside.read_text() == "ORIGINAL\n"


def test_agentuis_own_config_is_a_secret_and_a_home_under_opt_is_still_a_home(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from agentui.tools.safety import paths as P

    home = tmp_path / "home"
    (home / ".config" / "agentui").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert P.is_secret(home / ".config" / "agentui" / "config.toml")
    monkeypatch.setattr(P, "_READ_ONLY_ROOTS", (*P._READ_ONLY_ROOTS, str(tmp_path)))  # as if it were /opt
    ws = tmp_path / "ws"
    ws.mkdir()
    (home / "private.txt").write_text("x")
    assert not P.readable_unasked(home / "private.txt", ws)
    assert assess(f"cat {home / 'private.txt'}", ws).verdict is Verdict.ASK
    assert P.readable_unasked(tmp_path / "elsewhere.txt", ws)  # the rest of that root stays readable
