"""agentui.bus: routing, taps, recorder, backpressure without loss, task dropping, close."""

from __future__ import annotations

import asyncio
import json

import pytest

from agentui.bus import Bus, BusClosed, Tap
from agentui.clock import FakeClock
from agentui.contracts import (
    Envelope,
    FinalResult,
    Loss,
    Role,
    TaskCancelled,
    TaskStarted,
    UserInput,
)
from agentui.ids import SeededIds


def started(task: str = "t1") -> TaskStarted:
    return TaskStarted(task_id=task, text="hello")


async def test_routes_by_type_task_and_receiver() -> None:
    bus = Bus(clock=FakeClock(), ids=SeededIds(1, readable=True))
    by_type = bus.subscribe("a", types={"TaskStarted"})
    by_task = bus.subscribe("b", task_id="t2")
    by_recv = bus.subscribe("c", types={"UserInput"}, receiver=Role.PERCEIVER)
    await bus.publish(Role.RUNTIME, Role.USER, started("t1"), task_id="t1")
    await bus.publish(Role.RUNTIME, Role.USER, started("t2"), task_id="t2")
    await bus.publish(Role.USER, Role.PERCEIVER, UserInput(task_id="t2", text="x"), task_id="t2")
    await bus.publish(Role.USER, Role.PLANNER, UserInput(task_id="t2", text="y"), task_id="t2")
    assert [e.task_id for e in by_type.drain()] == ["t1", "t2"]
    assert [e.type for e in by_task.drain()] == ["TaskStarted", "UserInput", "UserInput"]
    got = by_recv.drain()
    assert [e.payload.text for e in got] == ["x"]


async def test_envelope_fields_come_from_injected_clock_and_ids() -> None:
    bus = Bus(clock=FakeClock(), ids=SeededIds(1, readable=True))
    env = await bus.publish(Role.RUNTIME, Role.USER, started(), task_id="t1")
    assert env.id == "msg-000001"
    assert env.ts == "2026-01-01T00:00:00.000Z"
    assert env.type == "TaskStarted" and env.sender is Role.RUNTIME and env.receiver is Role.USER


async def test_tap_sees_everything_and_cannot_publish() -> None:
    bus = Bus()
    tap = bus.tap("auditor")
    assert isinstance(tap, Tap)
    assert not hasattr(tap, "publish") and not hasattr(tap, "publish_envelope")
    assert not any(isinstance(v, Bus) for v in vars(tap).values())
    await bus.publish(Role.RUNTIME, Role.USER, started(), task_id="t1")
    await bus.publish(Role.USER, Role.PERCEIVER, UserInput(task_id="t1", text="x"), task_id="t1")
    assert [e.type for e in tap.drain()] == ["TaskStarted", "UserInput"]
    tap.close()
    await bus.publish(Role.RUNTIME, Role.USER, started(), task_id="t1")
    assert tap.drain() == []


async def test_slow_subscriber_loses_nothing_and_stays_bounded() -> None:
    bus = Bus(queue_size=8)
    sub = bus.subscribe("slow", types={"TaskStarted"})
    received: list[str] = []
    peak = 0

    async def slow_consumer() -> None:
        nonlocal peak
        async for env in sub:
            peak = max(peak, sub.pending)
            received.append(env.payload.text)
            await asyncio.sleep(0)  # yield: slower than the publisher
            if len(received) == 200:
                return

    task = asyncio.create_task(slow_consumer())
    for i in range(200):
        await bus.publish(Role.RUNTIME, Role.USER, TaskStarted(task_id="t", text=str(i)), task_id="t")
        assert sub.pending <= 8
    await task
    assert received == [str(i) for i in range(200)]
    assert peak <= 8


async def test_publisher_waits_when_queue_full() -> None:
    bus = Bus(queue_size=2)
    sub = bus.subscribe("s", types={"TaskStarted"})
    for i in range(2):
        await bus.publish(Role.RUNTIME, Role.USER, TaskStarted(task_id="t", text=str(i)))
    blocked = asyncio.create_task(bus.publish(Role.RUNTIME, Role.USER, TaskStarted(task_id="t", text="2")))
    await asyncio.sleep(0.01)
    assert not blocked.done()
    assert (await sub.get()).payload.text == "0"
    await asyncio.wait_for(blocked, 1)
    assert [e.payload.text for e in sub.drain()] == ["1", "2"]


async def test_drop_task_keeps_cancel_and_final_result() -> None:
    bus = Bus()
    sub = bus.subscribe("all")
    bus.drop_task("t1")
    await bus.publish(Role.RUNTIME, Role.USER, started("t1"), task_id="t1")
    await bus.publish(Role.RUNTIME, Role.USER, TaskCancelled(task_id="t1"), task_id="t1")
    loss = Loss(D=1, P=0, Omega=0.1, L=0.64)
    fr = FinalResult(task_id="t1", summary="s", loss=loss, directive="abandon")
    await bus.publish(Role.GGS, Role.USER, fr, task_id="t1")
    await bus.publish(Role.RUNTIME, Role.USER, started("t2"), task_id="t2")
    assert [e.type for e in sub.drain()] == ["TaskCancelled", "FinalResult", "TaskStarted"]
    assert bus.dropped == 1


async def test_close_ends_iteration_after_pending() -> None:
    bus = Bus()
    sub = bus.subscribe("s")
    await bus.publish(Role.RUNTIME, Role.USER, started())
    await bus.close()
    got = [e async for e in sub]
    assert len(got) == 1
    with pytest.raises(BusClosed):
        await bus.publish(Role.RUNTIME, Role.USER, started())


async def test_waiting_consumer_wakes_on_close() -> None:
    bus = Bus()
    sub = bus.subscribe("s")
    consumer = asyncio.create_task(sub.get())
    await asyncio.sleep(0)
    await bus.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(consumer, 1)


async def test_recorder_writes_canonical_lines_that_round_trip(tmp_path) -> None:
    bus = Bus(clock=FakeClock(), ids=SeededIds(3, readable=True))
    path = tmp_path / "rec" / "bus.jsonl"
    rec = bus.record(path)
    sent = [
        await bus.publish(Role.RUNTIME, Role.USER, started(), task_id="t1"),
        await bus.publish(Role.USER, Role.PERCEIVER, UserInput(task_id="t1", text="héllo 你好"), task_id="t1"),
    ]
    await rec.aclose()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and rec.written == 2
    for line, env in zip(lines, sent, strict=True):
        assert line == json.dumps(json.loads(line), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        back = Envelope.from_json(line)
        assert back == env and back.payload == env.payload
    assert "你好" in lines[1]


async def test_unsubscribe_stops_delivery() -> None:
    bus = Bus()
    sub = bus.subscribe("s", types={"TaskStarted"})
    sub.close()
    await bus.publish(Role.RUNTIME, Role.USER, started())
    assert sub.drain() == []


async def test_routes_follow_subscriptions_made_after_messages_flowed() -> None:
    bus = Bus()
    first = bus.subscribe("a", types={"TaskStarted"})
    await bus.publish(Role.RUNTIME, Role.USER, started("t1"), task_id="t1")  # the type's route is built
    late = bus.subscribe("b", types={"TaskStarted"})
    late_filtered = bus.subscribe("c", task_id="t2")
    tap = bus.tap("t")
    await bus.publish(Role.RUNTIME, Role.USER, started("t2"), task_id="t2")
    assert [len(first.drain()), len(late.drain()), len(late_filtered.drain()), len(tap.drain())] == [2, 1, 1, 1]
    late.close()
    tap.close()
    await bus.publish(Role.RUNTIME, Role.USER, started("t2"), task_id="t2")
    assert [len(first.drain()), len(late.drain()), len(late_filtered.drain()), len(tap.drain())] == [1, 0, 1, 0]


def test_bus_envelope_is_a_normal_frozen_envelope() -> None:
    import dataclasses

    from agentui.contracts import Envelope, Role, TaskStarted

    bus = Bus(ids=SeededIds(1, readable=True))
    p = TaskStarted(task_id="t", text="x")
    env = bus.envelope(Role.RUNTIME, Role.USER, p, "t")
    same = Envelope(id=env.id, ts=env.ts, task_id="t", sender=Role.RUNTIME, receiver=Role.USER,
                    type="TaskStarted", payload=p)
    assert env == same and env.payload is p and env.to_json() == same.to_json()
    assert Envelope.from_dict(env.to_dict()) == env
    with pytest.raises(dataclasses.FrozenInstanceError):
        env.id = "other"  # type: ignore[misc]
