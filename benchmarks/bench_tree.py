"""The goal-tree runner's bookkeeping per step at 500, 1,000, 2,000 and 5,000 nodes.

One real `step` per size: a temp git repo, a tree of groups of ten leaves where every leaf but the
last has passed, the fake LLM over HTTP (tests/fakellm) driving one pipeline task that writes the
last leaf's file, and a real guard. The figure is the step's wall time less the agent's and the
guard's own durations (from the iteration's meta.json): selection, validation, transitions, the
canonical writes, the planner prompt and the commit. Budgets grow linearly with the size.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _report import report

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root: tests.fakellm

from agentui.gcpolicy import settle  # noqa: E402
from agentui.tree.layout import TreeConfig, init_layout, render_config  # noqa: E402
from agentui.tree.model import Node, write_tree  # noqa: E402
from agentui.tree.runner import TreeRunner  # noqa: E402
from tests.fakellm import FakeLLM  # noqa: E402
from tests.functional.treeharness import agent_config, file_agent, make_repo  # noqa: E402

settle()

SIZES = (500, 1000, 2000, 5000)
SECONDS_PER_1000 = 0.5  # the budget: linear in the node count, plus a fixed part for git and the LLM round trips
FIXED_S = 0.5


def big_tree(n: int) -> Node:
    """`n` nodes: a root, groups of ten leaves; every leaf passed but the last one."""
    groups: list[Node] = []
    made = 1
    g = 0
    while made < n:
        group = Node(id=f"g{g}", order=g, title=f"group {g}", goal=f"the work of group {g}")
        made += 1
        for k in range(10):
            if made >= n:
                break
            group.children.append(Node(id=f"g{g}.{k}", order=k, title=f"leaf {g}.{k}",
                                       goal=f"write file g{g}_{k}.txt with its name in it",
                                       acceptance=[f"g{g}_{k}.txt exists"], passes=True))
            made += 1
        groups.append(group)
        g += 1
    last = groups[-1].children[-1] if groups[-1].children else groups[-1]
    last.passes, last.title, last.goal = False, "write z.txt", "write z.txt"
    for grp in groups:
        grp.passes = bool(grp.children) and all(c.passes for c in grp.children)
    return Node(id="root", title="a big tree", goal="everything", children=groups)


async def one(n: int, where: Path, fake: FakeLLM) -> float:
    repo = make_repo(where / f"repo{n}")
    lay = init_layout(repo, "big", node_id="root", guard="test -f z.txt")
    write_tree(lay.tree, big_tree(n))
    lay.config.write_text(render_config(TreeConfig(guard="test -f z.txt")))
    runner = TreeRunner(lay, agent_config(fake, where / f"data{n}"), yes=True)
    runner.start("bench")
    t0 = time.perf_counter()
    res = await runner.step()
    wall = time.perf_counter() - t0
    assert res.status == "complete" and res.guard == "pass", res
    meta = json.loads((lay.iteration_dir("bench", 1) / "meta.json").read_text())
    d = meta["durations_s"]
    return wall - d["agent"] - d["guard"]


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as fake:
        file_agent(fake)
        await one(100, Path(tmp), fake)  # warm: imports, the first connection, git's caches
        for n in SIZES:
            s = await one(n, Path(tmp), fake)
            report(f"tree.step_{n}", s, "s", "<=", round(FIXED_S + SECONDS_PER_1000 * n / 1000, 2))


if __name__ == "__main__":
    subprocess.run(["git", "--version"], check=True, capture_output=True)  # git is required
    asyncio.run(main())
