"""The memory-reading side of the roles (roles-v0.8 §R2 Memory Calibration).

- `calibrate` (R2, before every plan): the C-level SOPs and M/K potentials of the task's kind of
  work — the `intent:` space of R1's intent and the one code reads from the request
  (memory/workkind.py) — at most MAX_LESSONS lessons, most relevant first, each naming the Megram
  it came from; the user-wide
  remembered rules (space `user`, plus the legacy `manual`), and the consolidated Constraint
  Megrams of `tool:` spaces with a `path:` entity — structured (tool, target) pairs the plan
  validator enforces in code, as it does GGS's blocked targets. Caution comes back as its own
  list: the planner asks the user before it dispatches (v0.8: "proceed with confirmation gate").
- `tool_rules` (R3): the rules remembered for the tools a subtask is offered (`tool:<name>`).
- `rel_target`: targets named workspace-relative, as plans name them.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentui.contracts import Level, MemoryAction, SOPRecord
from agentui.tools.registry import shown

#: user-wide remembered rules (`agentui memory remember`), read for every plan
USER_SPACE = "user"
LEGACY_USER_SPACES = ("manual",)  # where `remember` wrote in earlier versions


@dataclass
class Calibration:
    must_not: list[str] = field(default_factory=list)
    prefer: list[str] = field(default_factory=list)
    caution: list[str] = field(default_factory=list)
    constraints: list[tuple[str, str, str]] = field(default_factory=list)  # (tool, target, rule text)
    megram_ids: list[str] = field(default_factory=list)  # the lessons shown, in the order shown


#: lessons of the task's own kind of work a plan is shown (C-level rules and M/K outcomes together)
MAX_LESSONS = 3
LESSON_CHARS = 240  # of one lesson in the prompt: its calls, not only its opening words


def provenance(mid: str, created_at: str) -> str:
    """Where a lesson came from: its Megram id (what `agentui memory forget` takes) and its day."""
    return f"[memory {mid if len(mid) <= 16 else mid[:8]}, {created_at[:10]}]"


def rel_target(target: str, workspace: Path) -> str:
    """An absolute path inside the workspace, made workspace-relative; anything else unchanged
    (the tools name paths to the model the same way)."""
    return shown(workspace, target) if target and os.path.isabs(target) else target


async def _rules(mem: Any, space: str) -> list[SOPRecord]:
    from agentui.memory.tags import ENV_LOCAL

    rules: list[SOPRecord] = await mem.query_c(space, ENV_LOCAL)
    return rules


async def memory_constraints(mem: Any, workspace: Path) -> list[tuple[str, str, str]]:
    """(tool, workspace-relative target, rule) of every live consolidated Constraint (σ < 0) held
    by a `tool:<name>` / `path:<target>` pair: what the plan validator refuses in code."""
    cs = await asyncio.to_thread(mem.list, Level.C)
    out: list[tuple[str, str, str]] = []
    for m in cs:
        if m.sigma >= 0 or not m.space.startswith("tool:") or not m.entity.startswith("path:"):
            continue
        target = rel_target(m.entity[len("path:"):], workspace)
        if target:
            out.append((m.space[len("tool:"):], target, m.content[:200]))
    return out


async def _lessons(mem: Any, spaces: list[str]) -> list[tuple[int, Any]]:
    """The M/K Megrams of `spaces` as (how many of the spaces hold it, Megram), most relevant first:
    held by both keys, then newest. A lesson GGS copied into both spaces is one lesson."""
    from agentui.memory.tags import ENV_LOCAL

    found: dict[tuple[str, str], tuple[int, Any]] = {}
    for sp in spaces:
        for m in await asyncio.to_thread(mem.list, None, sp, ENV_LOCAL):
            if m.level.value not in ("M", "K"):
                continue
            n, first = found.get((m.content, m.created_at), (0, m))
            found[(m.content, m.created_at)] = (n + 1, first)
    return sorted(found.values(), key=lambda x: (x[0], x[1].created_at, x[1].id), reverse=True)


async def calibrate(mem: Any, intent: str, workspace: Path, request: str = "") -> tuple[Calibration, dict[str, Any]]:
    """R2's calibration and a record of it for the task log."""
    from agentui.memory.tags import ENV_LOCAL
    from agentui.memory.workkind import task_spaces

    cal = Calibration()
    spaces = task_spaces(intent, request)
    sops: dict[str, Any] = {}
    for sp in spaces:
        for s in await mem.query_c(sp, ENV_LOCAL):
            sops.setdefault(s.content, s)
    # the first space with something to say decides the band: the intent's, else the request's
    pots = [(sp, await mem.query_mk(sp, ENV_LOCAL)) for sp in spaces]
    space, pot = next(((sp, p) for sp, p in pots if p.action != MemoryAction.IGNORE), pots[0])
    shown: list[tuple[list[str], Any]] = []  # (the list it goes to, SOPRecord or Megram)
    for s in sops.values():
        shown.append((cal.prefer if s.sigma > 0 else cal.must_not, s))
    if pot.action != MemoryAction.IGNORE:
        ranked = [m for _n, m in await _lessons(mem, spaces)]
        good = [m for m in ranked if m.sigma > 0]
        bad = [m for m in ranked if m.sigma < 0]
        if pot.action == MemoryAction.EXPLOIT:
            picked = [(cal.prefer, m) for m in good[:2]]
        elif pot.action == MemoryAction.AVOID:
            picked = [(cal.must_not, m) for m in bad[:2]]
        else:  # a mixed record: the best of each side, and the user is asked before the plan runs
            picked = [(cal.prefer, m) for m in good[:1]] + [(cal.must_not, m) for m in bad[:1]]
            cal.caution.extend(m.content[:200] for m in ranked[:2])
        shown.extend(picked)
    for lst, m in shown[:MAX_LESSONS]:
        lst.append(f"{m.content[:LESSON_CHARS]} {provenance(m.id, m.created_at)}")
        cal.megram_ids.append(m.id)
    for us in (USER_SPACE, *LEGACY_USER_SPACES):
        for r in await _rules(mem, us):
            (cal.prefer if r.sigma > 0 else cal.must_not).append(f"(remembered) {r.content[:200]}")
    cal.constraints = await memory_constraints(mem, workspace)
    cal.must_not.extend(f"{tool} on {target} ({rule[:120]})" for tool, target, rule in cal.constraints[:6])
    record = {"kind": "memory_calibration", "space": space, "spaces": spaces, "sops": len(sops),
              "potentials": pot.model_dump(mode="json"), "must_not": cal.must_not, "prefer": cal.prefer,
              "caution": cal.caution, "megrams": cal.megram_ids,
              "constraints": [f"{t}:{g}" for t, g, _ in cal.constraints]}
    return cal, record


async def tool_rules(mem: Any, tools: list[str]) -> list[str]:
    """Rules remembered for these tools (`tool:<name>`, env:local), for the executor's prompt."""
    if mem is None:
        return []
    out: list[str] = []
    for t in tools:
        try:
            for r in await _rules(mem, f"tool:{t}"):
                out.append(f"{t}: {'never' if r.sigma < 0 else 'prefer'} — {r.content[:160]}")
        except Exception:  # noqa: BLE001 - memory trouble must not stop a subtask
            return out
    return out
