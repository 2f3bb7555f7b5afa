"""ACP session listing from the data dir (#18): past tasks of the TUI or `agentui run` are sessions too."""

from __future__ import annotations

from agentui.acp.sessions import SessionRecord, SessionStore
from agentui.paths import DataLayout
from tests.fakellm import Reply
from tests.functional.pipeline import run_task


async def test_a_past_task_is_listed_as_a_one_task_session_and_replays(fakellm, tmp_path):
    fakellm.script("perceiver", [Reply.json({"kind": "chat", "reply": "A list is mutable; a tuple is not."})])
    r = await run_task(fakellm, tmp_path, "what is the difference between a list and a tuple?")
    tid = r.end.task_id
    store = SessionStore(DataLayout(tmp_path / "data"))
    [rec] = store.list()
    assert (
        rec.session_id == tid
        and rec.task_ids == [tid]
        and rec.title == "what is the difference between a list and a tuple?"
    )
    assert rec.cwd == str((tmp_path / "ws").resolve())
    assert store.list(cwd=str(tmp_path)) == []
    types = [e.type for e in store.replay(store.get(tid))]
    assert types[0] == "TaskStarted" and "PerceiverReply" in types
    # once an ACP session owns the task, the task is listed only inside it
    store.save(SessionRecord(session_id="s1", cwd=rec.cwd, title="mine", updated_at="2099-01-01T00:00:00.000Z",
                             task_ids=[tid]))
    assert [x.session_id for x in store.list()] == ["s1"]
    assert store.get("s1").title == "mine" and store.get("../etc") is None and store.get("nope") is None
