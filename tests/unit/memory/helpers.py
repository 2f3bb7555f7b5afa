from __future__ import annotations

from agentui.contracts import Level, MacroState, Megram
from agentui.memory import megram_params


def mg(store, state: MacroState | str, space: str = "tool:shell", entity: str = "path:/tmp/x",
       content: str = "", level: Level = Level.M) -> Megram:
    f, s, k = megram_params(state)
    return store.new_megram(content=content or f"{state} happened", level=level, space=space,
                            entity=entity, state=str(MacroState(state).value), f=f, sigma=s, k=k)
