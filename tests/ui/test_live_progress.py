"""What runs shows while it runs: the stage line names the subtask being executed and the tool call
in progress (its command, with the stage's elapsed time), then how the call ended; the result pane
leads with the answer sentence when the result carries one."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

from rich.console import Console

from agentui.ui.widgets import BusView, ResultPanel, StageLine
from tests.ui.test_app import SIZE, make_app, script_happy, type_task, wait_for


async def test_the_stage_line_names_the_running_subtask_and_tool_call(fakellm, tmp_path):
    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "count txt")
        await wait_for(pilot, lambda: any(e.type == "FinalResult" for e in app.query_one(BusView).envs))
        seen = app.query_one(StageLine).seen
        assert "R3 executing: count .txt files" in seen, seen
        assert "running shell: echo 2" in seen, seen
        assert any(s.startswith("R3 working — shell ok in ") and s.endswith(": echo 2") for s in seen), seen


async def test_the_answer_sentence_comes_first_and_is_what_ctrl_y_copies(fakellm, tmp_path):
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        final = SimpleNamespace(task_id="t1", summary="wc -l printed 7", output="7", answer="notes.txt has 7 lines.",
                                directive=SimpleNamespace(value="accept"), replans=0, partial_result=None,
                                next_moves=[])
        panel = app.query_one(ResultPanel)
        panel.show_final(final, {})
        await pilot.pause(0.05)
        text = str(panel.render())
        assert text.index("notes.txt has 7 lines.") < text.index("checked by"), text
        assert text.index("checked by") < text.index("wc -l printed 7"), text
        assert panel.copy_text == "notes.txt has 7 lines."
        final.answer = None  # a result without the sentence reads as before
        panel.show_final(final, {})
        assert "checked by" not in str(panel.render()) and panel.copy_text == "7"


async def test_at_80_columns_a_long_stage_and_the_meter_never_run_together(fakellm, tmp_path):
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        line = app.query_one(StageLine)
        line.start_task()
        line.set_stage("R1 perceiving the request and then some more words that do not fit", busy=True)
        await pilot.pause(0.05)
        from textual.geometry import Region

        row = "".join(strip.text for strip in line.render_lines(Region(0, 0, line.region.width, 1)))
        assert "  task " in row, row  # the stage is cut short with room to spare, not glued to "task"
        assert row.rstrip().endswith("0 tools"), row  # and the meter is whole


async def test_the_result_pane_shows_the_executors_text_while_it_is_generated(fakellm, tmp_path):
    """The executor's reply streams in slowly: the result pane shows it growing (the newest text,
    with who is writing), the bus pane does not list the pieces, and the task's result replaces it."""
    from tests.fakellm import Reply
    from tests.functional.pipeline import merge, perceive, plan, sub, verdicts

    words = " ".join(f"w{i}" for i in range(40))
    fakellm.script("perceiver", [perceive("say the words")])
    fakellm.script("planner",
                   [plan(["the words are said"], sub("say the words", "the words are given", mode="plausible"))])
    fakellm.script("executor", [Reply.stream({"tool": "finish", "output": words}, chunk_delay_s=0.03)])
    fakellm.script("agent_validator", [verdicts("pass", quote="w1")])
    fakellm.script("meta_validator", [merge(words, "pass", summary="said")])
    app = make_app(fakellm, tmp_path)
    shown: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "say the words")
        for _ in range(200):
            text = str(app.query_one(ResultPanel).render())
            if "live · R3 Executor" in text:
                shown.append(text)
            if any(e.type == "FinalResult" for e in app.query_one(BusView).envs):
                break
            await pilot.pause(0.03)
        full = json.dumps({"tool": "finish", "output": words})
        bodies = [t.split("\n", 1)[1] for t in shown if "is writing…" in t]
        # seen while it was generated: each a beginning of the reply, growing, the first well short of it
        assert len(set(bodies)) >= 2 and all(full.startswith(b) for b in bodies), shown
        assert [len(b) for b in bodies] == sorted(len(b) for b in bodies) and len(bodies[0]) < len(full) // 2
        await wait_for(pilot, lambda: app.current is None)
        await pilot.pause(0.3)  # longer than the throttle's pause: nothing late overwrites the result
        screen = app.export_screenshot().replace("&#160;", " ")
        assert app.query_one(ResultPanel).copy_text.endswith("w39") and "accept" in screen
        assert "is writing" not in screen and "live · " not in screen
        assert not any(e.type == "LLMDelta" for e in app.query_one(BusView).envs)


async def test_at_80_columns_a_running_commands_elapsed_time_is_not_cut(fakellm, tmp_path):
    # the command is what gets cut at 80 columns; the tool's elapsed time sits before it
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        line = app.query_one(StageLine)
        t = [100.0]
        line.now = lambda: t[0]
        line.start_task()
        line.set_stage("running shell: sleep 8; wc -l notes.txt && cat a-rather-long-file-name.txt | sort",
                       busy=True)
        t[0] += 2.4
        line.paint()
        await pilot.pause(0.05)
        from textual.geometry import Region

        row = "".join(strip.text for strip in line.render_lines(Region(0, 0, line.region.width, 1)))
        assert "running shell 2.4 s: sleep 8" in row, row
        assert row.rstrip().endswith("0 tools"), row  # the meter keeps its room


async def test_the_result_names_the_check_that_ran_and_what_it_printed(fakellm, tmp_path):
    script_happy(fakellm)  # the plan's check is `echo 2`, run by code before the verdict
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "count txt")
        await wait_for(pilot, lambda: any(e.type == "FinalResult" for e in app.query_one(BusView).envs))
        await pilot.pause(0.05)
        console = Console(width=160, record=True, file=io.StringIO())
        console.print(app.query_one(ResultPanel).render()._renderable)  # the head text and the cost table
        text = console.export_text()
    assert "2\nchecked by `echo 2` → 2\naccept after 0 replan(s): 2 txt files\n" in text, text
