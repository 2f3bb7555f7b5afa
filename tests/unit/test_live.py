"""LiveText: a role's reply pieces become few, bounded LLMDelta events on a real bus — throttled,
in order, never holding up the generating call even when a consumer stops reading."""

from __future__ import annotations

import asyncio
import contextlib
import time

from agentui.bus import Bus, BusClosed
from agentui.contracts import Role
from agentui.live import LiveText


def live_on(bus: Bus, **kw) -> LiveText:
    async def publish(env) -> None:  # noqa: ANN001
        with contextlib.suppress(BusClosed):
            await bus.publish_envelope(env)

    return LiveText(lambda role, ev, tid: bus.envelope(role, Role.USER, ev, task_id=tid), publish,
                    lambda: "t1", offer=bus.publish_nowait, **kw)


async def test_pieces_become_few_ordered_events_and_the_end_goes_out_at_once():
    bus = Bus()
    tap = bus.tap("ui")
    live = live_on(bus, interval_s=0.1)
    live.watch("executor", 1, "start", "")
    t0 = time.monotonic()
    sent = [f"piece{i} " for i in range(60)]
    for p in sent:  # 60 pieces over ~0.3 s
        live.watch("executor", 1, "delta", p)
        await asyncio.sleep(0.005)
    live.watch("executor", 1, "end", "")
    events = [e.payload for e in tap.drain()]  # the end is delivered synchronously, with the rest
    assert "".join(e.text for e in events) == "".join(sent)
    assert events[0].fresh and not any(e.fresh for e in events[1:])
    assert events[-1].done and not any(e.done for e in events[:-1]) and events[-1].chars == len("".join(sent))
    # throttled: ten a second at most, plus the end
    assert len(events) <= (time.monotonic() - t0) / 0.1 + 2 and len(events) < 10
    await live.aclose()


async def test_each_call_is_its_own_text_and_a_whole_reply_shows_nothing():
    bus = Bus()
    tap = bus.tap("ui")
    live = live_on(bus, interval_s=0.01)
    live.watch("meta_validator", 1, "start", "")
    live.watch("meta_validator", 1, "delta", "{\"broken")
    live.watch("meta_validator", 1, "end", "")
    live.watch("meta_validator", 2, "start", "")  # the next attempt: a call of its own
    live.watch("meta_validator", 2, "delta", "{\"ok\": 1}")
    live.watch("meta_validator", 2, "end", "")
    live.watch("planner", 1, "start", "")  # not a streamed role
    live.watch("planner", 1, "delta", "{}")
    live.watch("planner", 1, "end", "")
    live.watch("executor", 1, "start", "")  # a server that does not stream: start, end, no text
    live.watch("executor", 1, "end", "")
    await asyncio.sleep(0.05)
    events = [e.payload for e in tap.drain()]
    assert [(e.role, e.call, e.text, e.fresh, e.done) for e in events] == [
        (Role.META_VALIDATOR, 1, '{"broken', True, True), (Role.META_VALIDATOR, 2, '{"ok": 1}', True, True)]
    await live.aclose()


async def test_a_consumer_that_stops_reading_never_holds_up_the_call():
    bus = Bus()
    stuck = bus.subscribe("slow-ui", types={"LLMDelta"}, maxsize=1)  # reads one, then never again
    live = live_on(bus, interval_s=0.01, max_chars=50)
    live.watch("executor", 1, "start", "")
    t0 = time.monotonic()
    for i in range(2000):
        live.watch("executor", 1, "delta", f"{i:04d} ")  # returns at once, whatever the bus does
        if i % 100 == 0:
            await asyncio.sleep(0.01)
    live.watch("executor", 1, "end", "")
    assert time.monotonic() - t0 < 1.0
    await asyncio.sleep(0.05)
    first = await asyncio.wait_for(stuck.get(), 1)
    assert first.payload.fresh and len(first.payload.text) <= 50
    await asyncio.sleep(0.05)
    # what waited for room is one event: the pieces since gathered into it, cut to the newest 50
    second = await asyncio.wait_for(stuck.get(), 1)
    assert len(second.payload.text) <= 50 and second.payload.skipped > 0
    await live.aclose()
    await bus.close()


async def test_parallel_calls_of_one_role_stay_apart():
    bus = Bus()
    tap = bus.tap("ui")
    live = live_on(bus, interval_s=0.01)
    live.watch("executor", 1, "start", "")
    live.watch("executor", 2, "start", "")
    for i in range(20):
        live.watch("executor", 1 + i % 2, "delta", f"{'ab'[i % 2]}{i} ")
        await asyncio.sleep(0.002)
    live.watch("executor", 1, "end", "")
    live.watch("executor", 2, "end", "")
    await asyncio.sleep(0.05)
    events = [e.payload for e in tap.drain()]
    for call, letter in ((1, "a"), (2, "b")):
        mine = [e for e in events if e.call == call]
        assert "".join(e.text for e in mine) == "".join(f"{letter}{i} " for i in range(20) if i % 2 == call - 1)
        assert mine[0].fresh and mine[-1].done
    await live.aclose()
