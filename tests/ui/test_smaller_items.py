"""The smaller session items: the audit pane reports at each task's end, the Megram browser labels
its two potentials apart, `r` remembers where the CLI does, `agentui --workspace DIR`, `make run
WORKSPACE=…`, a demo that lasts, and `doctor` beside an open UI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentui.contracts import AuditReport
from agentui.ui.screens import MemoryScreen
from agentui.ui.widgets import BusView
from tests.ui.test_app import SIZE, make_app, script_happy, type_task, wait_for

ROOT = Path(__file__).resolve().parents[2]


async def test_the_audit_pane_reports_at_the_end_of_each_task(fakellm, tmp_path):
    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        assert app.config.audit.report_interval_s == 300  # no periodic report could come in this test
        await type_task(pilot, "count txt")
        await wait_for(pilot, lambda: any(e.type == "FinalResult" for e in app.query_one(BusView).envs))
        await wait_for(pilot, lambda: any(isinstance(a, AuditReport) for a in app.audit_history), steps=100)
        report = next(a for a in app.audit_history if isinstance(a, AuditReport))
        assert report.messages_seen > 0


async def test_r_in_the_memory_browser_remembers_into_space_user(fakellm, tmp_path):
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoryScreen))
        app.screen.query_one("DataTable").focus()
        await pilot.press("r")
        await pilot.pause(0.1)
        for ch in "run tests first":
            await pilot.press("space" if ch == " " else ch)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(m.content == "run tests first" for m in app.memory.list()))
        m = next(m for m in app.memory.list() if m.content == "run tests first")
        assert (m.space, m.level.value, m.entity) == ("user", "C", "env:local")


async def test_the_megram_detail_labels_its_own_and_its_pairs_potentials(fakellm, tmp_path):
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        app.memory.remember("keep answers short", space="user")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoryScreen))
        await pilot.pause(0.2)
        detail = str(app.screen.query_one("#mem-detail").render())
        assert "this Megram: M_att 1.00" in detail and "Exploit" in detail, detail
        assert "pair over its 0 M/K Megram(s): M_att 0.00" in detail, detail
        assert "attention" not in detail  # one name per quantity: the table's


def test_workspace_before_the_command_opens_the_ui_on_it(tmp_path):
    from agentui.cli import build_parser

    p = build_parser()
    assert p.parse_args(["--workspace", str(tmp_path)]).workspace == str(tmp_path)
    assert p.parse_args(["-w", str(tmp_path), "ui"]).workspace == str(tmp_path)
    assert p.parse_args(["ui", "--workspace", str(tmp_path)]).workspace == str(tmp_path)
    assert p.parse_args(["-w", str(tmp_path), "run", "x"]).workspace == str(tmp_path)
    assert p.parse_args(["run", "x"]).workspace is None  # the default: the current directory
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "--workspace", str(tmp_path / "nope")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "is not a directory" in r.stderr, r.stderr  # read, not refused as unknown


def test_make_run_takes_a_workspace_and_the_demo_lasts():
    run = subprocess.run(["make", "-n", "run", "WORKSPACE=/tmp/proj"], cwd=ROOT, capture_output=True, text=True)
    assert '--workspace "/tmp/proj"' in run.stdout, run.stdout
    demo = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True)
    assert "--speed 1 " in demo.stdout, demo.stdout  # the 11 s recording at its own pace


def test_doctor_notes_a_store_the_ui_holds_open(tmp_path):
    from agentui.clock import SystemClock
    from agentui.ids import UuidIds
    from agentui.memory import open_memory
    from agentui.paths import DataLayout

    layout = DataLayout(tmp_path / "d")
    layout.ensure()
    mem = open_memory(layout.memory_db, SystemClock(), UuidIds())  # as the open UI holds it
    try:
        env = {**os.environ, "AGENTUI_NO_AUTODETECT": "1"}
        r = subprocess.run([sys.executable, "-m", "agentui.cli", "doctor", "--json", "--data-dir", str(layout.root)],
                           capture_output=True, text=True, timeout=60, env=env)
    finally:
        import asyncio

        asyncio.run(mem.close())
    doc = json.loads(r.stdout)
    checks = doc["checks"] if isinstance(doc, dict) else doc
    lev = next(c for c in checks if c["name"] == "leveldb")
    assert lev["ok"] and "in use by PID" in lev["detail"] and "while it is open" in lev["detail"], lev
