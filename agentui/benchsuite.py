"""`agentui bench`: run a task suite through the real pipeline and measure it.

A suite is a JSON list of ``{id, description, init, check}``:
- ``init``: bash run in a fresh temporary workspace before the task;
- ``check``: a bash script run in the workspace afterwards (exit 0 = pass), or
  ``{"expected": V, "match": "integer" | "string"}`` compared with the final answer of a run that
  ended in success (exit 0); an abandoned run's failure summary never passes a value check.

Each task runs as its own `agentui run --json --yes` process (fresh workspace, fresh data dir, a
hard timeout), so one task can neither hang the suite nor leak state into the next. Per task we
record pass/fail, directive, replans, LLM calls, tokens, parse repairs and wall seconds.

`run_passes` measures memory: with `shared_memory` every task uses one data dir, in the suite's
order, and `passes` repeats the suite, so pass 1 can be set against fresh memory per task and
pass 2 against pass 1.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator


class ExpectedCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")
    expected: int | str
    match: Literal["integer", "string"]


class SuiteTask(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    description: str = Field(min_length=1)
    init: str = "true"
    check: str | ExpectedCheck

    @field_validator("check", mode="before")
    @classmethod
    def _check_form(cls, v: Any) -> Any:
        if isinstance(v, dict):  # validate as ExpectedCheck so the error names its fields
            return ExpectedCheck.model_validate(v)
        if not isinstance(v, str):
            raise ValueError("check is a bash script or {expected, match}")
        return v


class SuiteError(Exception):
    """The suite file is missing or invalid (exit code 2)."""


def load_suite(path: Path) -> list[SuiteTask]:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise SuiteError(f"suite file not found: {path}") from e
    except json.JSONDecodeError as e:
        raise SuiteError(f"{path}: not valid JSON ({e})") from e
    try:
        tasks = TypeAdapter(list[SuiteTask]).validate_python(raw)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        msg = str(err.get("ctx", {}).get("error", err["msg"]))
        raise SuiteError(f"{path}: invalid task at {loc}: {msg}") from e
    if not tasks:  # an empty suite would "pass" having measured nothing
        raise SuiteError(f"{path}: the suite has no tasks; add at least one {{id, description, init, check}}")
    seen: set[str] = set()
    for t in tasks:
        if t.id in seen:
            raise SuiteError(f"{path}: duplicate task id {t.id!r}")
        seen.add(t.id)
    return tasks


def answer_text(final: dict[str, Any] | None) -> str:
    """The run's single answer (`FinalResult.answer`); empty when it named none. Neither the merged
    step outputs nor the summary stand in for it: a number anywhere in them proves nothing."""
    if not final:
        return ""
    answer = final.get("answer")
    return answer.strip() if isinstance(answer, str) else ""


_INT = re.compile(r"(?<!\w)(?<!\d\.)-?\d+(?!\w)(?!\.\d)")  # whole integers, not parts of 3.5


def matches_expected(check: ExpectedCheck, answer: str) -> bool:
    """An integer check compares the answer's last whole number; a string check looks for the
    expected text in the answer, case-insensitively."""
    if check.match == "integer":
        try:
            want = int(check.expected)
        except (TypeError, ValueError):
            return False
        found = _INT.findall(answer.replace(",", ""))
        return bool(found) and int(found[-1]) == want
    return str(check.expected).strip().casefold() in answer.casefold()


def run_check(task: SuiteTask, workspace: Path, answer: str, timeout: float = 60, *, succeeded: bool = True) -> bool:
    if isinstance(task.check, ExpectedCheck):
        # A value is checked only in an answer the run stood behind: an abandoned run's failure
        # summary ("2/2 subtasks failed") must not pass a task whose expected value is 2.
        return succeeded and matches_expected(task.check, answer)
    env = {**os.environ, "AGENTUI_ANSWER": answer}
    try:
        proc = subprocess.run(["bash", "-c", task.check], cwd=workspace, env=env,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return proc.returncode == 0


def _stats_totals(stats: dict[str, Any]) -> dict[str, int]:
    by_role = stats.get("by_role") or {}
    repairs = stats.get("parse_repairs")
    if repairs is None:
        repairs = sum(int(r.get("parse_repairs", 0)) for r in by_role.values() if isinstance(r, dict))
    return {
        "llm_calls": int(stats.get("llm_calls", 0)),
        "prompt_tokens": int(stats.get("prompt_tokens", 0)),
        "completion_tokens": int(stats.get("completion_tokens", 0)),
        "parse_repairs": int(repairs),
        "parse_failures": int(stats.get("parse_failures", 0)),  # unusable replies, cuts included
        "runaways_cut": int(stats.get("runaways_cut", 0)),
        "tool_calls": int(stats.get("tool_calls", 0)),
    }


def run_task(
    task: SuiteTask,
    *,
    timeout: float,
    run_args: Sequence[str] = (),
    ablation: str | None = None,
    keep: str | Path | None = None,
    data_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Run one suite task in a fresh workspace and data dir; return its result record.

    With `keep` (a directory), the task's workspace and data dir (task log, audit, memory) are made
    under it and left there for reading afterwards; the record names the path. With `data_dir`, the
    task uses that data dir (and its memory) instead of a fresh one, and it is left in place.
    """
    if keep is not None:
        Path(keep).mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=f"agentui-bench-{task.id}-", dir=keep))
    workspace, data = root / "ws", Path(data_dir) if data_dir is not None else root / "data"
    workspace.mkdir()
    rec: dict[str, Any] = {"id": task.id, "passed": False, "directive": None, "replans": 0,
                           "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                           "parse_repairs": 0, "tool_calls": 0, "wall_s": 0.0, "error": None}
    if keep is not None:
        rec["kept"] = str(root)
    t0, started = time.monotonic(), time.time()
    try:
        init = subprocess.run(["bash", "-c", task.init], cwd=workspace, capture_output=True, text=True, timeout=60)
        if init.returncode != 0:
            rec["error"] = f"init failed (exit {init.returncode}): {init.stderr.strip()[:200]}"
            return rec
        cmd = [sys.executable, "-m", "agentui.cli", "run", "--json", "--yes",
               "--workspace", str(workspace), "--data-dir", str(data), *run_args]
        if ablation:
            cmd += ["--ablation", ablation]
        cmd.append(task.description)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            rec["error"] = f"timed out after {timeout:g} s"
            rec.update(_logged_usage(data, since=started))  # what the killed run spent still counts
            return rec
        except BaseException:
            # Ctrl+C or a kill of the bench: the task runs in its own session, so take it down too.
            # SIGTERM first: `agentui run` cancels its task and kills its tools' process groups
            # (they have sessions of their own, out of reach of a killpg here), then SIGKILL.
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        rec["exit_code"] = proc.returncode
        try:
            doc = json.loads(out)
        except json.JSONDecodeError:
            rec["error"] = f"no JSON result (exit {proc.returncode}): {err.strip()[-300:]}"
            return rec
        final = doc.get("final") or {}
        rec["directive"] = final.get("directive", "reply" if "text" in final else None)
        rec["replans"] = int(final.get("replans", 0) or 0)
        rec.update(_stats_totals(doc.get("stats") or {}))
        rec["answer"] = answer_text(final)[:500]
        rec["passed"] = run_check(task, workspace, answer_text(final), succeeded=proc.returncode == 0)
        # done (exit 0) with a result the check rejects: the figure a user judges the tool on
        rec["false_success"] = proc.returncode == 0 and not rec["passed"]
        return rec
    finally:
        rec["wall_s"] = round(time.monotonic() - t0, 2)
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)


def _logged_usage(data: Path, since: float = 0.0) -> dict[str, int]:
    """LLM calls and tokens of a run that was killed, from its task logs (it printed no stats);
    with `since` (a time.time()), only the logs written since then: a shared data dir holds the
    logs of earlier tasks too."""
    calls = prompt = completion = 0
    for log in sorted((data / "tasks").glob("*.jsonl")) if (data / "tasks").is_dir() else []:
        if since and log.stat().st_mtime < since:
            continue
        try:
            lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue  # the last line of a killed writer may be cut
            if isinstance(r, dict) and r.get("kind") == "llm":
                calls += 1
                prompt += int(r.get("prompt_tokens") or 0)
                completion += int(r.get("completion_tokens") or 0)
    return {"llm_calls": calls, "prompt_tokens": prompt, "completion_tokens": completion}


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(results)
    passed = sum(1 for r in results if r["passed"])
    tot = {k: sum(int(r.get(k, 0) or 0) for r in results)
           for k in ("llm_calls", "prompt_tokens", "completion_tokens", "parse_repairs", "parse_failures",
                     "runaways_cut", "replans", "tool_calls")}
    wall = sum(float(r.get("wall_s", 0)) for r in results)
    return {
        "tasks": n, "passed": passed, "failed": n - passed,
        "false_successes": sum(1 for r in results if r.get("false_success")),
        "success_rate": passed / n if n else 0.0,
        **tot, "wall_s": round(wall, 1),
        "llm_calls_per_task": tot["llm_calls"] / n if n else 0.0,
        "tokens_per_task": (tot["prompt_tokens"] + tot["completion_tokens"]) / n if n else 0.0,
    }


def run_suite(
    tasks: list[SuiteTask],
    *,
    timeout: float,
    run_args: Sequence[str] = (),
    ablation: str | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[SuiteTask], None] | None = None,
    keep: str | Path | None = None,
) -> list[dict[str, Any]]:
    results = []
    for t in tasks:
        if on_start:
            on_start(t)
        r = run_task(t, timeout=timeout, run_args=run_args, ablation=ablation, keep=keep)
        results.append(r)
        if on_result:
            on_result(r)
    return results


def run_passes(
    tasks: list[SuiteTask],
    *,
    passes: int,
    shared_memory: bool,
    timeout: float,
    run_args: Sequence[str] = (),
    ablation: str | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[SuiteTask], None] | None = None,
    on_pass: Callable[[int, list[dict[str, Any]]], None] | None = None,
    keep: str | Path | None = None,
) -> list[list[dict[str, Any]]]:
    """Run the suite `passes` times, in the suite file's order every time; one result list per pass.

    With `shared_memory`, every task of every pass uses one data dir, so a task meets the memory of
    the tasks before it and pass n+1 meets all of pass n (`memory_dir` in each record says where).
    Without it, each task has a fresh data dir, as in :func:`run_suite`. Each record carries its
    `pass` (1-based) and `shared_memory`.
    """
    if keep is not None:
        Path(keep).mkdir(parents=True, exist_ok=True)
    shared = Path(tempfile.mkdtemp(prefix="agentui-bench-memory-", dir=keep)) if shared_memory else None
    out: list[list[dict[str, Any]]] = []
    try:
        for n in range(1, passes + 1):
            results: list[dict[str, Any]] = []
            for t in tasks:
                if on_start:
                    on_start(t)
                r = run_task(t, timeout=timeout, run_args=run_args, ablation=ablation, keep=keep, data_dir=shared)
                r.update({"pass": n, "shared_memory": shared_memory})
                if shared is not None and keep is not None:
                    r["memory_dir"] = str(shared)
                results.append(r)
                if on_result:
                    on_result(r)
            out.append(results)
            if on_pass:
                on_pass(n, results)
    finally:
        if shared is not None and keep is None:
            shutil.rmtree(shared, ignore_errors=True)
    return out


def pass_line(n: int, results: list[dict[str, Any]]) -> str:
    """One pass's pass rate, calls and tokens, as `bench --passes` prints it."""
    s = summarise(results)
    return (f"pass {n}: {s['passed']}/{s['tasks']} passed ({s['success_rate']:.0%}), "
            f"{s['llm_calls_per_task']:.1f} calls/task, {s['tokens_per_task']:.0f} tokens/task, {s['wall_s']} s")


def canonical_line(obj: dict[str, Any]) -> str:
    from agentui.contracts import canonical_json

    return canonical_json(obj)
