"""The memory-reading side of the roles (roles-v0.8 §R2 Memory Calibration).

- `calibrate` (R2, before every plan): the intent's C-level SOPs and M/K potentials, the user-wide
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

from agentui.contracts import Level, MemoryAction
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


def rel_target(target: str, workspace: Path) -> str:
    """An absolute path inside the workspace, made workspace-relative; anything else unchanged
    (the tools name paths to the model the same way)."""
    return shown(workspace, target) if target and os.path.isabs(target) else target


async def _rules(mem: Any, space: str) -> list[Any]:
    from agentui.memory.tags import ENV_LOCAL

    return await mem.query_c(space, ENV_LOCAL)


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


async def calibrate(mem: Any, intent: str, workspace: Path) -> tuple[Calibration, dict[str, Any]]:
    """R2's calibration and a record of it for the task log."""
    from agentui.memory.tags import ENV_LOCAL, intent_space

    cal = Calibration()
    space = intent_space(intent)
    sops = await mem.query_c(space, ENV_LOCAL)
    pot = await mem.query_mk(space, ENV_LOCAL)
    for s in sops:
        (cal.prefer if s.sigma > 0 else cal.must_not).append(s.content[:200])
    if pot.action in (MemoryAction.EXPLOIT, MemoryAction.AVOID, MemoryAction.CAUTION):
        recent = await asyncio.to_thread(mem.list, None, space, ENV_LOCAL)
        recent = sorted((m for m in recent if m.level.value in ("M", "K")), key=lambda m: m.created_at,
                        reverse=True)
        if pot.action == MemoryAction.EXPLOIT:
            cal.prefer.extend(f"what worked before: {m.content[:200]}" for m in [m for m in recent if m.sigma > 0][:2])
        elif pot.action == MemoryAction.AVOID:
            cal.must_not.extend(f"what failed before: {m.content[:200]}" for m in [m for m in recent if m.sigma < 0][:2])
        else:
            cal.caution.extend(m.content[:200] for m in recent[:2])
    for us in (USER_SPACE, *LEGACY_USER_SPACES):
        for r in await _rules(mem, us):
            (cal.prefer if r.sigma > 0 else cal.must_not).append(f"(remembered) {r.content[:200]}")
    cal.constraints = await memory_constraints(mem, workspace)
    cal.must_not.extend(f"{tool} on {target} ({rule[:120]})" for tool, target, rule in cal.constraints[:6])
    record = {"kind": "memory_calibration", "space": space, "sops": len(sops),
              "potentials": pot.model_dump(mode="json"), "must_not": cal.must_not, "prefer": cal.prefer,
              "caution": cal.caution, "constraints": [f"{t}:{g}" for t, g, _ in cal.constraints]}
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
