"""Harness for the tree runner's tests: temp git repos and a fake-LLM "agent" whose replies are
functions of what each role is asked (so iteration counts need not be scripted in order)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakellm import FakeLLM, Reply
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def make_repo(path: Path, *, branch: str = "main") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    (path / "README").write_text("project\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()[::-1]


def text_of(req: dict[str, Any]) -> str:
    """The user turns only (system prompts carry example file names)."""
    return json.dumps([m for m in req.get("messages", []) if m.get("role") == "user"], ensure_ascii=False)


def last_user(req: dict[str, Any]) -> str:
    users = [m["content"] for m in req.get("messages", []) if m.get("role") == "user"]
    return users[-1] if users else ""


def file_agent(fake: FakeLLM, *, decompose: Callable[[str], list[dict] | None] = lambda _u: None,
               behaviour: Callable[[str, str], str] | None = None) -> None:
    """Every role answers from the request. The task names `<name>.txt`; `behaviour(file, text)` is
    "write" (write the file then finish), "finish" (finish without writing) or "infeasible".
    Markers in the task text reach every role through the planner's step: RETRY after a retry,
    FIX after a guard failure."""
    behaviour = behaviour or (lambda _f, _t: "write")

    def planner(req: dict[str, Any]) -> Reply:
        children = decompose(last_user(req))
        if children:
            return Reply.json({"decision": "decompose", "reason": "two files", "children": children,
                               "assumptions": ["files are plain text"], "questions": []})
        return Reply.json({"decision": "execute", "reason": "small enough"})

    def perceiver(req: dict[str, Any]) -> Reply:
        t = last_user(req)
        name = _file(t)
        tags = (" RETRY" if "Previous attempt:" in t else "") + (" FIX" if "check failed" in t else "")
        return perceive(f"write {name}{tags}")

    def planner2(req: dict[str, Any]) -> Reply:
        t = text_of(req)
        name = _file(t)
        # the markers, from the intent or (R1's intent being the kind of work) the verbatim request
        tags = (" RETRY" if "RETRY" in t or "Previous attempt:" in t else "") + \
            (" FIX" if "FIX" in t or "check failed" in t else "")
        return plan([f"{name} exists"], sub(f"write {name}{tags}", f"{name} exists", tools=["write_file"]))

    def executor(req: dict[str, Any]) -> Reply:
        t = text_of(req)
        name = _file(t)
        how = behaviour(name, t)
        if how == "infeasible":
            return Reply.json({"tool": "infeasible", "output": f"cannot write {name}"})
        if how == "write" and len(req["messages"]) == 2:
            return call("write_file", path=name, content=name.upper())
        if how == "finish" and len(req["messages"]) == 2:
            # a claim R4a can ground (#13) that still leaves no <name>: the guard must catch it
            return call("write_file", path=f"{name}.draft", content="draft")
        return finish(f"{name} handled")

    fake.responder("tree_planner", planner)
    fake.responder("perceiver", perceiver)
    fake.responder("planner", planner2)
    fake.responder("executor", executor)
    # a pass quotes the file name, as the write_file result shows it (R4a grounding, #13)
    fake.responder("agent_validator", lambda r: verdicts("pass", quote=_file(text_of(r))))
    fake.responder("meta_validator", lambda _r: merge("ok", "pass", summary="the file is written"))


def _file(text: str) -> str:
    import re

    m = re.search(r"\b([a-z0-9_]+\.txt)\b", text)
    return m.group(1) if m else "unknown.txt"


def agent_config(fake: FakeLLM, data: Path, **sections: dict[str, Any]):
    from tests.functional.pipeline import config_for

    sections.setdefault("ggs", {}).update({"max_replans": 1, "time_budget_ms": 10**9})
    return config_for(fake, data, **sections)


def config_toml(path: Path, fake: FakeLLM, data: Path) -> Path:
    path.write_text(f'data_dir = "{data}"\n[llm]\nbase_url = "{fake.base_url}"\nmax_retries = 0\n'
                    'backoff_base_s = 0.0\n[ggs]\nmax_replans = 1\ntime_budget_ms = 1000000000\n'
                    '[pipeline]\ncorrection_budget = 0\n')
    return path
