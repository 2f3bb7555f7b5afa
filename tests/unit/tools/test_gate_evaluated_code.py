"""Places where bash itself evaluates text are code: array subscripts (`test -v`, `${a[i]}`),
arithmetic (`$(( ))`, `(( ))`, `let`, `[[ -eq ]]`, `${s:off}`), `${x@P}`, `${!x}`, `printf -v`,
`read`/`mapfile` targets, `trap`. Each attack is first shown to run code with plain bash, then
shown never to be judged safe and never to run unattended through the shell tool."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentui.tools import Approvals, ToolContext, default_registry
from agentui.tools.safety import Verdict, assess

PAYLOAD = "b[$(touch PWNED)]"

# (command, does plain bash 5 run the payload?)
ATTACKS = [
    ("test -v 'x[$(touch PWNED)]'", True),
    ("[ -v 'x[$(touch PWNED)]' ]", True),
    ("! test -v 'x[`touch PWNED`]'", True),
    ("test -v \"x[\\$(touch PWNED)]\" || true", True),
    ("[[ -v 'x[$(touch PWNED)]' ]]", True),
    ("y='b[$(touch PWNED)]'; echo $((y))", True),
    ("y='b[$(touch PWNED)]'; echo $(( y + 1 ))", True),
    ("y='b[$(touch PWNED)]'; echo $[y]", True),
    ("y='b[$(touch PWNED)]'; (( y )) || true", True),
    ("y='b[$(touch PWNED)]'; [[ y -eq 1 ]] || true", True),
    ("y='b[$(touch PWNED)]'; [[ 1 -lt y ]] || true", True),
    ("y='b[$(touch PWNED)]'; echo ${a[y]}", True),
    ("x=abc y='b[$(touch PWNED)]'; echo ${x:y}", True),
    ("x=abc y='b[$(touch PWNED)]'; echo \"${x:0:y}\"", True),
    ("x='$(touch PWNED)'; echo ${x@P}", True),
    ("x='$(touch PWNED)'; echo \"${x@P}\"", True),
    ("y='b[$(touch PWNED)]'; echo ${!y}", True),
    ("for i in 'b[$(touch PWNED)]'; do echo $((i)); done", True),
    ("read y < payload.txt; echo $((y))", True),
    ("read -a y < payload.txt; echo $((y))", False),  # -a splits the payload at its blank
    ("let 'a[$(touch PWNED)]=1'", True),
    ("declare -i n; n='b[$(touch PWNED)]'", True),
    ("typeset -i n='b[$(touch PWNED)]'", True),
    ("f() { local -i n='b[$(touch PWNED)]'; }; f", True),
    ("printf -v 'a[$(touch PWNED)]' x", True),
    ("mapfile -C 'touch PWNED #' -c 1 x < payload.txt", True),
    ("readarray -C 'touch PWNED #' -c 1 x < payload.txt", True),
    ("trap 'touch PWNED' EXIT", True),
    ("PROMPT_COMMAND='touch PWNED'; echo x", False),  # only interactive shells run it, still code
    ("y='b[$(touch PWNED)]'; test $((y)) -eq 0", True),
    ("y='b[$(touch PWNED)]'; a[y]=1", True),
    ("y='b[$(touch PWNED)]'; declare -n r=y; echo $((r))", False),
    ("wait -n -p 'a[$(touch PWNED)]'", False),
    ("test 'x[$(touch PWNED)]' -eq 1", False),  # test itself does not evaluate; the operand could carry code
    ("eval 'touch PWNED'", True),
    ("source payload.sh", True),
    (". payload.sh", True),
    ("f() { touch PWNED; }; export -f f; bash -c f", True),
    ("cat <<EOF\n${x@P}\nEOF", False),
]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "payload.txt").write_text(PAYLOAD + "\n")
    (w / "payload.sh").write_text("touch PWNED\n")
    (w / "victim.txt").write_text("keep\n")
    return w


@pytest.mark.parametrize(("command", "harmful"), ATTACKS)
def test_plain_bash_really_runs_the_payload(ws: Path, command: str, harmful: bool) -> None:
    """The corpus is real: plain bash runs the payload of every case marked harmful."""
    if not harmful:
        pytest.skip("not run by a non-interactive bash; judged as code all the same")
    subprocess.run(["/bin/bash", "-c", command], cwd=ws, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    assert (ws / "PWNED").exists(), command


@pytest.mark.parametrize(("command", "harmful"), ATTACKS)
def test_evaluated_text_is_never_judged_safe(ws: Path, command: str, harmful: bool) -> None:
    a = assess(command, ws)
    assert a.verdict is not Verdict.SAFE, command
    assert a.once_only or all(p.startswith(command.split()[0]) and len(p) > 10 for p in a.patterns), (command, a)


@pytest.mark.parametrize(("command", "harmful"), [c for c in ATTACKS if c[1]])
async def test_unattended_the_payload_never_runs(ws: Path, command: str, harmful: bool) -> None:
    """No one to ask (no --yes, no confirmer): the shell tool refuses and nothing runs."""
    ctx = ToolContext(workspace=ws, task_id="t", confirm=None, approvals=Approvals(), timeout_s=20)
    rec = await default_registry("linux").call("shell", {"command": command}, ctx)
    assert not rec.ok and not (ws / "PWNED").exists(), (command, rec.error)


@pytest.mark.parametrize("builtin", ["let x=1", "declare -i x=1", "printf -v x %s y", "mapfile x",
                                     "trap 'echo' EXIT", "export -f f", "typeset -i x", "set -x", "shopt -s extglob",
                                     "unset x", "getopts ab x", "alias ls=rm", "hash -p /bin/rm ls", "enable -n echo",
                                     "readonly x=1", "complete -C ls ls", "builtin eval ls"])
def test_a_builtin_is_never_covered_by_a_stored_approval(ws: Path, builtin: str) -> None:
    """Builtins change the shell or evaluate their operands: a yes for them is once only."""
    a = assess(builtin, ws)
    assert a.verdict is Verdict.ASK and a.once_only, (builtin, a)


@pytest.mark.parametrize(
    "command",
    [
        "echo $((1 + 2))",
        "echo $(( 6 * 7 ))",
        "test -v HOME",
        "[ -v 'x[1]' ]",
        "test 1 -eq 1",
        "[ 3 -gt 2 ]",
        "echo ${HOME}",
        "echo ${PWD:-x}",
        "echo ${HOME:0:4}",
        "echo ${HOME@Q}",
        'echo "${HOME}"',
        "read -r x < victim.txt",
        "echo '${x@P} $((y)) x[$(id)]'",
    ],
)
def test_literal_arithmetic_and_plain_names_still_run(ws: Path, command: str) -> None:
    assert assess(command, ws).verdict is Verdict.SAFE, command


@pytest.mark.parametrize("command", [
    "jq -n env", "jq -n 'env.HOME'", "jq -n '$ENV.GITHUB_TOKEN'", "jq -n '$ENV'", "jq -n input_filename",
    "jq -n '$__loc__'", "jq -n '\"\\(env)\"'", "jq --arg a b env", "jq -n 'import \"x\" as x; 1'",
    "jq -n 'include \"x\"; 1'", "jq -n get_search_list", "jq -n '[modulemeta]'", "jq --rawfile a victim.txt -n '$a'",
    "jq --slurpfile a victim.txt -n '$a'", "jq -L /tmp -n 1", "jq -f prog.jq victim.txt",
    "jq -n '$__prog_args'", "jq -n 'def f: env; f'",
])
def test_jq_programs_reading_the_environment_or_files_ask(ws: Path, command: str) -> None:
    assert assess(command, ws).verdict is not Verdict.SAFE, command


@pytest.mark.parametrize("command", [
    "jq . victim.txt", "jq -r '.a | keys[]' victim.txt", "jq -n '[range(3)] | map(. * 2)'",
    "jq --arg n x '.[$n]' victim.txt", "jq -c 'select(.env == \"prod\")' victim.txt", "jq '.env' victim.txt",
    "jq 'def inc: . + 1; inc' victim.txt", "jq -n '\"\\(1 + 2)\"'", "jq '{a: .b}' victim.txt",
    "jq 'label $out | foreach .[] as $i (0; . + 1; if . > 2 then ., break $out else . end)' victim.txt",
    "jq '.[] | {name: .n, env: .e}' victim.txt", "jq '. as $x | $x.env' victim.txt",
])
def test_plain_jq_programs_still_run(ws: Path, command: str) -> None:
    assert assess(command, ws).verdict is Verdict.SAFE, command


@pytest.mark.parametrize("command", [
    "awk 'BEGIN{ARGV[1]=\"/etc/shadow\";ARGC=2}{print}'", "awk 'BEGIN{ARGV[1]=\"/proc/1/environ\";ARGC=2}{print}'",
    "awk -v ARGC=2 '{print}'", "awk '{print}' ARGC=1", "awk 'BEGIN{print ENVIRON[\"HOME\"]}'",
    "date -f /etc/shadow", "date --file=/etc/shadow", "date -f ../outside.txt", "cat /etc/shadow",
    "find . -newer /etc/shadow", "ps e -o pid,args", "ps -o pid,environ", "ps eww", "ps aux e",
    "ps -eo pid,cmd,environ", "ps --format=env", "cat /proc/1/environ", "strings /proc/self/environ",
    "xxd /proc/1/cmdline", "sort --compress-program=sh victim.txt", "sed 's/x/y/e' victim.txt",
    "sed '1e id' victim.txt", "sed 's/x/y/w out' victim.txt", "find . -fprint out", "find . -fls out",
    "find . -exec sh -c id \\;", "tar --to-command=sh -xf a.tar", "tar -tf a.tar --checkpoint-action=exec=id",
    "git -c core.pager=id log", "git log --output=out", "git grep -O id x", "git diff --ext-diff",
    "xargs echo", "env", "printenv", "env -i ls", "tee -a victim.txt", "less '+!id' victim.txt", "man -P id ls",
    "GIT_PAGER='touch PWNED' git -p log", "PAGER='touch PWNED' git log",
])
def test_options_that_take_code_files_or_the_environment_ask(ws: Path, command: str) -> None:
    assert assess(command, ws).verdict is not Verdict.SAFE, command


@pytest.mark.parametrize("command", [
    "echo $'\\'' ${x@P} $'\\''",  # $'…' escapes a quote: what follows it is live text
    "base64 -i /etc/shadow", "diff -X /etc/shadow victim.txt victim.txt", "cat /etc/kubernetes/admin.conf",
    "cat /etc/mysql/debian.cnf",
])
def test_quoting_tricks_and_file_options_do_not_hide_a_read_or_code(ws: Path, command: str) -> None:
    assert assess(command, ws).verdict is not Verdict.SAFE, command


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
@pytest.mark.parametrize("command", ["git -C sub status", "git -C sub log", "git -C . -C sub diff"])
def test_git_C_into_a_repository_whose_config_runs_code_asks(ws: Path, command: str) -> None:
    """`-C sub` obeys sub/.git/config (core.fsmonitor runs on status): plain git runs it, the gate asks."""
    subprocess.run(["git", "init", "-q", str(ws / "sub")], check=True, capture_output=True)
    (ws / "sub" / ".git" / "config").write_text("[core]\n\tfsmonitor = touch PWNED\n")
    if command == "git -C sub status":
        subprocess.run(["/bin/bash", "-c", command], cwd=ws, capture_output=True, timeout=20)
        assert (ws / "sub" / "PWNED").exists()
        (ws / "sub" / "PWNED").unlink()
    assert assess(command, ws).verdict is not Verdict.SAFE, command
    from agentui.tools.safety import assess_write
    assert assess_write(ws / "sub" / ".git" / "hooks" / "pre-commit", ws).verdict is Verdict.ASK


def test_test_reads_its_integer_operands_without_evaluating_them(ws: Path) -> None:
    """`[ "$n" -gt 5 ]` stays unasked: bash's `test` (unlike `[[ ]]`) parses -eq operands as plain
    integers, so a variable holding a subscript with a substitution is an error, never code."""
    command = "n='b[$(touch PWNED)]'; [ \"$n\" -gt 5 ]; test \"$n\" -eq 1; echo done"
    subprocess.run(["/bin/bash", "-c", command], cwd=ws, capture_output=True, timeout=10)
    assert not (ws / "PWNED").exists()
    assert assess("n=$(wc -l < victim.txt); [ \"$n\" -gt 5 ] && echo big", ws).verdict is Verdict.SAFE
