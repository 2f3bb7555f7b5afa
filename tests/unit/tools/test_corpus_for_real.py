"""Destructive commands executed for real (issue #14): each goes through the shell tool with nobody to
confirm (a non-interactive run without --yes) in a throw-away workspace, HOME pointed at a temp dir,
and every file — workspace, home, the directory next to them — must survive unchanged.

Only commands whose targets are inside the temp dirs are run; none touching /, /etc, devices,
processes or the network (those are judged, not run, in test_safety_corpus.py).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from agentui.tools import ToolContext, default_registry
from tests.unit.tools.corpus import DANGEROUS, DENIED
from tests.unit.tools.test_safety_corpus import make_workspace

_NEVER_RUN = re.compile(
    r"(^|[\s;&|(])(/|/etc|/usr|/dev/sd|/tmp|/var|/home|/proc)(\s|$|/)|sudo|doas|\bsu\b|kill|shutdown|reboot|halt|"
    r"systemctl|launchctl|crontab|mkfs|\bdd\b|diskutil|defaults|security|osascript|\bat now|hostname|date -s|"
    r"nohup|disown|&\s*$|npm|pip|cargo|go run|\bmake\b|pytest|docker|vim|\bvi\b|emacs|\bex\b|less|watch|"
    r"parallel|expect|mail|ssh|scp|\bnc\b|curl|wget|\bgit (push|fetch|pull|clone)|\bgh\b|aws|ping|dig|\bhost\b|"
    r"/dev/tcp|python3 script|node app|rsync .* user@|--no-preserve-root|ulimit|umask|chown|exec 3|"
    r"\bcoproc\b|\bselect\b|\bsleep 100"
)
RUNNABLE = [c for c, _ in DANGEROUS if not _NEVER_RUN.search(c)] + [c for c in DENIED if not _NEVER_RUN.search(c)]


def snapshot(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            key = str(p.relative_to(root))
            if p.is_symlink():
                out[key] = "link:" + os.readlink(p)
            elif p.is_file():
                out[key] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[key] = "dir:" + oct(p.stat().st_mode & 0o777)
    return out


def test_enough_commands_run_for_real() -> None:
    assert len(RUNNABLE) >= 200


async def test_destructive_commands_do_nothing_unconfirmed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("FAKE PRIVATE KEY\n")
    (home / ".bashrc").write_text("# rc\n")
    (home / "Documents").mkdir()
    (home / "Documents" / "thesis.txt").write_text("years of work\n")
    monkeypatch.setenv("HOME", str(home))
    ws = make_workspace(tmp_path)
    (tmp_path / "outside.txt").write_text("neighbour\n")
    registry = default_registry("linux")
    before = snapshot(tmp_path)
    ran: list[str] = []
    for command in RUNNABLE:
        ctx = ToolContext(workspace=ws, task_id="t", timeout_s=10)
        rec = await registry.call("shell", {"command": command}, ctx)
        assert not rec.ok, f"{command!r} ran unasked: {rec.evidence[:200]}"
        assert rec.error and ("denied" in rec.error or "refused" in rec.error), (command, rec.error)
        ran.append(command)
        after = snapshot(tmp_path)
        assert after == before, f"{command!r} changed {set(before.items()) ^ set(after.items())}"
    assert len(ran) == len(RUNNABLE)
