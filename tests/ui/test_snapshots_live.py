"""Snapshot: the executor's reply while it is generated, in the result pane at 80×24 — the demo
recording cut mid-task, followed by the live-text messages a streamed reply puts on the bus. Review
the SVG in tests/ui/__snapshots__/test_snapshots_live when it changes."""

from __future__ import annotations

import json
from pathlib import Path

from agentui.contracts import Envelope, LLMDelta, Role
from tests.ui.test_snapshots import DEMO, replay_app

LIVE = Path("/tmp/agentui-snapshot-live/recording.jsonl")


def live_recording() -> Path:
    """The demo up to round 1's dispatch, then the executor's first step done and its second
    half written."""
    lines = DEMO.read_text(encoding="utf-8").splitlines()
    dispatches = [i for i, s in enumerate(lines) if json.loads(s)["type"] == "DispatchManifest"]
    kept = lines[: dispatches[1] + 2]
    deltas = [(1, '{"tool": "glob", "args": {"pattern": "**/*.ini"}}', True, True, "08.781"),
              (2, '{"tool": "read_file", "args": {"path": "conf', True, False, "09.100"),
              (2, 'ig/server.ini"}}', False, False, "09.200")]
    chars = {1: 0, 2: 0}
    for n, (call, text, fresh, done, ts) in enumerate(deltas, 1):
        chars[call] += len(text)
        ev = LLMDelta(role=Role.EXECUTOR, call=call, text=text, fresh=fresh, done=done, chars=chars[call])
        env = Envelope(id=f"msg-live-{n}", ts=f"2026-01-01T00:00:{ts}Z", task_id="task-000001",
                       sender=Role.EXECUTOR, receiver=Role.USER, type="LLMDelta", payload=ev)
        kept.append(env.to_json())
    LIVE.parent.mkdir(parents=True, exist_ok=True)
    LIVE.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return LIVE


async def _settle(pilot) -> None:
    for _ in range(40):
        await pilot.pause(0.05)
        if "is writing" in str(pilot.app.query_one("#result").render()):
            break
    await pilot.pause(0.2)


def test_the_executors_text_while_it_is_generated_80x24(snap_compare):
    app = replay_app()
    app.replay_path = live_recording()
    assert snap_compare(app, terminal_size=(80, 24), run_before=_settle)
