"""Memory in the TUI: the Megrams a plan was made with are listed where the plan is shown (task
detail), Enter on one opens the Megram browser on it, and forgetting it there takes it out of the
store, so the next plan is made without it. Pilot over the fake LLM, a real runtime, real tools and
a real LevelDB store."""

from __future__ import annotations

import io

from rich.console import Console
from textual.widgets import DataTable, OptionList

from agentui.clock import FakeClock
from agentui.config import Config
from agentui.ids import SeededIds
from agentui.llm import LLMPool
from agentui.memory import ENV_LOCAL, open_memory
from agentui.memory.workkind import request_space
from agentui.ui.app import AgentApp
from agentui.ui.modals import YesNoModal
from agentui.ui.screens import MemoryScreen, TaskDetailScreen
from agentui.ui.widgets import BusView, ResultPanel
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.ui.test_app import SIZE, type_task, wait_for

REQUEST = "how many txt files are here?"
BAD = "failed (abandon) for \"count files\": avoid glob `**/*.txt` (no usable result)"
GOOD = "worked (accept) for \"count files\": 1 step(s) [shell]; calls that worked: shell `ls *.txt | wc -l`"


def _script(fake) -> None:
    fake.responder("perceiver", lambda _r: perceive("count the txt files"))
    fake.responder("planner", lambda _r: plan(["the count is given"],
                                              sub("count .txt files", "a number", tools=["shell"]),
                                              checks=["ls *.txt | wc -l"]))
    fake.responder("executor", lambda r: call("shell", command="ls *.txt | wc -l") if len(r["messages"]) == 2
                   else finish("2"))
    fake.responder("agent_validator", lambda _r: verdicts("pass", quote="2"))
    fake.responder("meta_validator", lambda _r: merge("2", "pass", summary="2 txt files"))


def _text(widget) -> str:
    """What a Static shows, as plain text (its content may be a Group of renderables)."""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(widget.content)
    return console.export_text()


def _manifests(app) -> list:
    return [e.payload for e in app.query_one(BusView).envs if e.type == "DispatchManifest"]


async def test_a_plans_megram_opens_in_the_browser_and_forgetting_it_keeps_it_from_the_next_plan(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("a.txt", "b.txt"):
        (ws / name).write_text("x\n")
    db = tmp_path / "data" / "memory.leveldb"
    db.parent.mkdir()
    clock, ids = FakeClock(), SeededIds(3, readable=True)
    mem = open_memory(db, clock, ids)
    space = request_space(REQUEST)
    assert space is not None
    # two consolidated lessons of this kind of work: one to avoid, one to follow
    good = mem.remember(GOOD, level="C", space=space, entity=ENV_LOCAL, sigma=1.0)
    bad = mem.remember(BAD, level="C", space=space, entity=ENV_LOCAL, sigma=-1.0)
    _script(fakellm)
    cfg = Config.model_validate({"llm": {"base_url": fakellm.base_url, "max_retries": 0},
                                 "pipeline": {"correction_budget": 0}, "ggs": {"time_budget_ms": 10**9},
                                 "memory": {"dreamer_interval_s": 0}})
    app = AgentApp(cfg, data_dir=tmp_path / "data", workspace=ws, clock=clock, ids=ids, animate=False,
                   pool=LLMPool(cfg), memory=mem)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, REQUEST)
        await wait_for(pilot, lambda: any(e.type == "FinalResult" for e in app.query_one(BusView).envs))
        [first] = _manifests(app)
        assert sorted(first.memory_ids) == sorted([bad.id, good.id])
        assert "planned with 2 Megram(s) from memory — Ctrl+D lists them" in _text(app.query_one(ResultPanel))

        await pilot.press("ctrl+d")
        assert isinstance(app.screen, TaskDetailScreen)
        assert "planned with 2 Megram(s) from memory" in _text(app.screen.query_one("#task-tree"))
        listed = app.screen.query_one("#plan-memory", OptionList)
        rows = [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]
        i = first.memory_ids.index(bad.id)
        assert rows[i] == f"round 0 · {bad.id.removeprefix('megram-')} C {space}: {BAD[:59]}…"
        listed.focus()
        for _ in range(i):
            await pilot.press("down")
        await pilot.press("enter")  # the bad lesson, in the browser
        assert isinstance(app.screen, MemoryScreen)
        table = app.screen.query_one(DataTable)
        assert table.row_count == 2  # the task's Megrams only, not every one in memory
        assert table.cursor_row == 1 and app.screen._selected() == bad.id  # not the first row: the jump moved
        assert BAD in _text(app.screen.query_one("#mem-detail"))

        await pilot.press("f")  # forget it, once confirmed
        assert isinstance(app.screen, YesNoModal)
        assert "avoid glob" in app.screen.question
        await pilot.press("y")
        await pilot.pause(0.1)
        assert isinstance(app.screen, MemoryScreen) and table.row_count == 1
        assert app.screen._selected() == good.id
        await pilot.press("escape")
        assert isinstance(app.screen, TaskDetailScreen)
        row = str(listed.get_option_at_index(i).prompt)
        assert row.endswith("(no longer in memory)")
        await pilot.press("escape")

        n = len(fakellm.calls("planner"))
        await type_task(pilot, REQUEST)
        await wait_for(pilot, lambda: len([e for e in app.query_one(BusView).envs if e.type == "FinalResult"]) == 2)
        second = _manifests(app)[-1]
        assert bad.id not in second.memory_ids and good.id in second.memory_ids
        prompt = fakellm.calls("planner")[n]["messages"][1]["content"]
        assert "ls *.txt | wc -l" in prompt and "**/*.txt" not in prompt
        await pilot.press("ctrl+d")
        await pilot.press("m")  # the key: the browser on this task's plan's Megrams
        assert isinstance(app.screen, MemoryScreen) and app.screen.ids == second.memory_ids
        assert app.screen._selected() == second.memory_ids[0]
    await mem.close()
    # the store on disk, opened again: the forgotten lesson is gone, the other kept
    again = open_memory(db, FakeClock(), SeededIds(4, readable=True))
    try:
        assert {m.id for m in again.list(None, space, ENV_LOCAL)} >= {good.id}
        assert bad.id not in {m.id for m in again.list()}
    finally:
        await again.close()
