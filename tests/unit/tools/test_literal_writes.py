"""A shell command whose line alone fixes what it writes to a workspace file shows that change as
a diff when it asks (`cat > f <<'EOF'`, `echo … >> f`, `printf '…' > f`); every preview is checked
against what real bash writes, and every other command gets none (never a guess)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentui.contracts import ConfirmationChoice
from agentui.tools import default_registry
from agentui.tools.literal_writes import literal_write
from tests.unit.tools.test_gate import Answer
from tests.unit.tools.test_write_diffs import ctx

PREVIEWED = [
    "cat > out.txt <<'EOF'\nx $y `z` \\n\n  indented\n\nEOF\n",
    "cat > out.txt <<\"EOF\"\n$HOME stays\nEOF",
    "cat <<EOF > out.txt\nplain text, no expansion\nEOF\n",
    "cat >> out.txt <<'END'\nappended\nEND\n",
    "cat >'out.txt' << 'EOF'\nq\nEOF\n",
    "echo hi there > out.txt",
    "echo 'a  b' \"c d\"e f > out.txt",
    "echo >> out.txt",
    "echo one>>out.txt",
    "printf 'a\\nb\\tc\\\\d' > out.txt",
    "printf 'no newline' >> out.txt",
]

NOT_PREVIEWED = [
    "cat <<EOF > out.txt\nhi $USER\nEOF\n",  # expands
    "cat > out.txt <<-EOF\n\tx\nEOF\n",  # strips tabs
    "cat > out.txt <<'EOF'\nx\nEOF\nrm -f other\n",  # a second command
    "cat > out.txt <<'EOF'\nnever ends\n",
    "echo -n hi > out.txt", "echo -e 'a\\nb' > out.txt", "echo $HOME > out.txt", "echo $(date) > out.txt",
    "echo *.py > out.txt", "echo ~ > out.txt", "echo a{b,c} > out.txt", "echo hi > out.txt 2>&1",
    "echo a > out.txt; rm x", "echo a | tee out.txt", "printf '%s\\n' x > out.txt", "printf 'a\\x41' > out.txt",
    "sed -i s/a/b/ out.txt", "echo \"a\\\"b\" > out.txt",
]


@pytest.mark.parametrize("command", PREVIEWED)
def test_the_preview_is_exactly_what_bash_writes(command: str, tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("before\n")
    lw = literal_write(command)
    assert lw is not None and lw.path == "out.txt"
    expected = ("before\n" if lw.append else "") + lw.content
    subprocess.run(["/bin/bash", "-c", command], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "out.txt").read_text() == expected


@pytest.mark.parametrize("command", NOT_PREVIEWED)
def test_anything_else_gets_no_preview(command: str) -> None:
    assert literal_write(command) is None


async def test_an_overwrite_by_a_heredoc_asks_with_its_diff(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("one\ntwo\n")
    yes = Answer(ConfirmationChoice.APPROVE)
    rec = await default_registry("linux").call(
        "shell", {"command": "cat > notes.txt <<'EOF'\none\n2\nEOF\n"}, ctx(ws, yes))
    assert rec.ok, rec.error
    [req] = yes.requests
    assert req.change is not None and req.change.path == "notes.txt"
    assert "-two" in req.change.diff.splitlines() and "+2" in req.change.diff.splitlines()
    assert (req.change.added, req.change.removed) == (1, 1)
    assert (ws / "notes.txt").read_text() == "one\n2\n"


async def test_a_command_it_cannot_read_asks_without_a_diff_and_outside_the_workspace_too(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("one\n")
    no = Answer(ConfirmationChoice.DENY)
    reg = default_registry("linux")
    await reg.call("shell", {"command": "sed -i s/one/two/ notes.txt"}, ctx(ws, no))
    await reg.call("shell", {"command": "echo x >> ../elsewhere.txt"}, ctx(ws, no))
    assert len(no.requests) == 2 and all(r.change is None for r in no.requests)
    assert (ws / "notes.txt").read_text() == "one\n"


async def test_a_secret_files_text_is_never_shown(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("TOKEN=abc123\n")
    no = Answer(ConfirmationChoice.DENY)
    await default_registry("linux").call("shell", {"command": "echo TOKEN=new > .env"}, ctx(ws, no))
    [req] = no.requests
    assert req.change is not None and "abc123" not in req.change.diff and "abc123" not in (req.change.old_text or "")
    assert (ws / ".env").read_text() == "TOKEN=abc123\n"
