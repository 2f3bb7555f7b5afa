"""`agentui memory` subcommands as a user runs them (real LevelDB, real subprocesses, no LLM)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def mem(data, *args, stdin=""):
    return subprocess.run([sys.executable, "-m", "agentui.cli", "--data-dir", str(data), "memory", *args],
                          capture_output=True, text=True, env=dict(os.environ), timeout=60, input=stdin)


def test_remember_list_show_forget_export_dream(tmp_path):
    r = mem(tmp_path, "remember", "run the tests before committing")
    assert r.returncode == 0 and r.stdout.startswith("remembered ")
    r = mem(tmp_path, "remember", "--level", "M", "--space", "intent:修复_测试", "--avoid", "do not pin")
    assert r.returncode == 0
    st = json.loads(mem(tmp_path, "stats", "--json").stdout)
    assert st["total"] == 2 and st["by_level"]["C"] == 1 and st["by_level"]["M"] == 1 and st["tag_pairs"] == 2
    rows = json.loads(mem(tmp_path, "list", "--json", "--space", "intent:修复_测试").stdout)
    assert [x["content"] for x in rows] == ["do not pin"] and rows[0]["sigma"] == -1.0
    cid = json.loads(mem(tmp_path, "list", "--json", "--level", "C").stdout)[0]["id"]
    shown = json.loads(mem(tmp_path, "show", cid[:8], "--json").stdout)
    assert shown["megram"]["id"] == cid and "attention" in shown["potentials"]
    r = mem(tmp_path, "forget", cid[:8])  # non-interactive without --yes: refuses
    assert r.returncode == 2 and "--yes" in r.stderr
    assert json.loads(mem(tmp_path, "stats", "--json").stdout)["total"] == 2
    assert mem(tmp_path, "forget", "--yes", cid[:8]).returncode == 0
    lines = mem(tmp_path, "export").stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["content"] == "do not pin"
    d = json.loads(mem(tmp_path, "dream", "--json").stdout)  # no LLM configured: template rules
    assert d["scanned"] == 1
    r = mem(tmp_path, "show", "nope")
    assert r.returncode == 2 and "nope" in r.stderr


def test_locked_memory_is_a_clear_error(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys,time;from agentui.memory import open_memory;from agentui.clock import SystemClock;"
        "from agentui.ids import UuidIds;m=open_memory(sys.argv[1],SystemClock(),UuidIds());"
        "print('ready',flush=True);time.sleep(30)"), str(tmp_path / "memory.leveldb")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        r = mem(tmp_path, "stats")
        assert r.returncode == 2 and f"PID {holder.pid}" in r.stderr  # a store that cannot be used: 2 (#15)
    finally:
        holder.kill()
        holder.wait()
