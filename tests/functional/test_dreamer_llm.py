"""The Dreamer's rule text from the brain tier, over the fake LLM server (v0.8 §6e)."""

from __future__ import annotations

from datetime import UTC, datetime

from agentui.clock import FakeClock
from agentui.contracts import MacroState
from agentui.ids import SeededIds
from agentui.llm import LLMPool
from agentui.memory import Dreamer, LevelDBMemory, megram_params
from agentui.memory.dreamer import llm_distiller
from tests.fakellm.server import FakeLLM, Reply

from .pipeline import config_for

S, E = "tool:shell", "path:/etc/shadow"


def _store(tmp_path):
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    store = LevelDBMemory(tmp_path / "mem", clock, SeededIds(3, readable=True))
    f, s, k = megram_params(MacroState.ABANDON)
    store.write_many([store.new_megram(content=f"cat /etc/shadow denied #{i}", level="M", space=S, entity=E,
                                       state="abandon", f=f, sigma=s, k=k) for i in range(6)])
    return store, clock


async def _dream(fakellm: FakeLLM, tmp_path, reply: Reply):
    """One Dreamer pass over six abandon outcomes, the rule worded by the fake `dreamer` role."""
    fakellm.script("dreamer", [reply])
    store, clock = _store(tmp_path)
    pool = LLMPool(config_for(fakellm, tmp_path / "data"))
    try:
        rep = await Dreamer(store, clock, llm_distiller(pool)).run_once()
    finally:
        await pool.aclose()
    return store, rep


async def test_rule_written_by_the_dreamer_role(fakellm: FakeLLM, tmp_path) -> None:
    store, rep = await _dream(fakellm, tmp_path, Reply.text("  Never read /etc/shadow through the shell tool.\n"))
    assert rep.consolidated == 1
    (sop,) = await store.query_c(S, E)
    assert sop.content == "Never read /etc/shadow through the shell tool." and sop.is_constraint
    (call,) = fakellm.calls("dreamer")
    prompt = call["messages"][-1]["content"]
    assert "constraint (what to avoid)" in prompt
    assert all(f"cat /etc/shadow denied #{i}" in prompt for i in range(6))
    await store.close()


async def test_cut_off_rule_falls_back_to_the_template(fakellm: FakeLLM, tmp_path) -> None:
    store, rep = await _dream(fakellm, tmp_path, Reply.fault("length", "Never read /etc/shadow through the shell"))
    assert rep.consolidated == 1
    (sop,) = await store.query_c(S, E)
    assert sop.content.startswith("Constraint — avoid: tool:shell / path:/etc/shadow (6 outcomes)")
    await store.close()
