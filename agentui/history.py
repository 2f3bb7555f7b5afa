"""Past tasks: what the data dir's task logs and bus recordings say about each (no Textual here).

The runtime writes `tasks/<task id>.jsonl` (envelopes, confirmations, an `end` record with the cost
figures) and `recordings/<task id>.bus.jsonl` (the envelopes only). This module lists them —
time, goal, outcome, cost, workspace — for the TUI's history screen and ACP `session/list`, and
loads one task's envelopes for a replay. A damaged line is skipped, never fatal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentui.contracts import Envelope, FinalResult, UserInput
from agentui.paths import DataLayout

# envelope types a summary needs; other lines are not parsed (a task log holds thousands)
_WANTED = ("TaskStarted", "FinalResult", "PerceiverReply", "TaskCancelled", "LLMUsage", "ExecutionResult")


@dataclass
class TaskRecord:
    """One past task as the history lists it."""

    task_id: str
    started: str = ""  # ISO 8601 UTC of the first envelope ("" if unknown)
    ended: str = ""  # ISO 8601 UTC of the last envelope or the end record
    goal: str = ""
    workspace: str = ""
    outcome: str = "unfinished"  # accept | abandon | … (GGS's directive), reply, cancelled, unfinished
    summary: str = ""  # GGS's summary, the Perceiver's reply, or the cancel reason
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: int = 0
    wall_s: float = 0.0
    log: Path | None = None
    recording: Path | None = None
    by_role: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def replayable(self) -> bool:
        return self.recording is not None or self.log is not None

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id, "started": self.started, "ended": self.ended, "goal": self.goal,
            "workspace": self.workspace, "outcome": self.outcome, "summary": self.summary,
            "llm_calls": self.llm_calls, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "tool_calls": self.tool_calls, "wall_s": self.wall_s,
            "log": str(self.log) if self.log else None,
            "recording": str(self.recording) if self.recording else None,
        }


def _task_id_of(path: Path, suffix: str) -> str:
    return path.name[: -len(suffix)] if path.name.endswith(suffix) else path.stem


def _lines(path: Path) -> Iterator[str]:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip():
                    yield line
    except OSError:
        return


def _envelope_dicts(path: Path, *, from_log: bool, wanted: tuple[str, ...] | None) -> Iterator[dict[str, Any]]:
    """Envelope dicts from a recording (one per line) or a task log (`kind: envelope` records)."""
    for line in _lines(path):
        if wanted is not None and not any(f'"{t}"' in line for t in wanted):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if not isinstance(doc, dict):
            continue
        if from_log:
            env = doc.get("envelope")
            if doc.get("kind") == "envelope" and isinstance(env, dict):
                yield env
        else:
            yield doc


def _end_record(path: Path) -> dict[str, Any] | None:
    end = None
    for line in _lines(path):
        if '"end"' not in line:
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict) and doc.get("kind") == "end":
            end = doc
    return end


def _summarise(rec: TaskRecord) -> TaskRecord:
    """Fill `rec` from its log (preferred: it has the end record's figures) or its recording."""
    src, from_log = (rec.log, True) if rec.log is not None else (rec.recording, False)
    assert src is not None
    usage = {"calls": 0, "prompt": 0, "completion": 0}
    by_role: dict[str, dict[str, float]] = {}
    tools = 0
    for d in _envelope_dicts(src, from_log=from_log, wanted=_WANTED):
        t, p, ts = d.get("type"), d.get("payload") or {}, str(d.get("ts") or "")
        if ts:
            rec.started = rec.started or ts
            rec.ended = max(rec.ended, ts)
        if not isinstance(p, dict):
            continue
        if t == "TaskStarted":
            rec.goal = str(p.get("text", ""))
            rec.workspace = str(p.get("workspace", ""))
            rec.started = ts or rec.started
        elif t == "FinalResult":
            rec.outcome = str(p.get("directive", "final"))
            rec.summary = str(p.get("summary", ""))
        elif t == "PerceiverReply" and rec.outcome == "unfinished":
            rec.outcome, rec.summary = "reply", str(p.get("text", ""))
        elif t == "TaskCancelled":
            rec.outcome, rec.summary = "cancelled", str(p.get("reason", ""))
        elif t == "LLMUsage":
            usage["calls"] += 1
            usage["prompt"] += int(p.get("prompt_tokens") or 0)
            usage["completion"] += int(p.get("completion_tokens") or 0)
            r = by_role.setdefault(str(p.get("role", "?")), {"calls": 0, "prompt_tokens": 0,
                                                             "completion_tokens": 0, "seconds": 0.0})
            r["calls"] += 1
            r["prompt_tokens"] += int(p.get("prompt_tokens") or 0)
            r["completion_tokens"] += int(p.get("completion_tokens") or 0)
            r["seconds"] = round(r["seconds"] + float(p.get("latency_s") or 0.0), 4)
        elif t == "ExecutionResult":
            tools += len(p.get("tool_calls") or [])
    rec.llm_calls, rec.prompt_tokens, rec.completion_tokens = usage["calls"], usage["prompt"], usage["completion"]
    rec.tool_calls, rec.by_role = tools, by_role
    end = _end_record(rec.log) if rec.log is not None else None
    if end is not None:
        st = end.get("stats") or {}
        rec.ended = str(end.get("ts") or rec.ended)
        if end.get("cancelled"):
            rec.outcome, rec.summary = "cancelled", str(end.get("reason") or rec.summary)
        # the runtime's own figures win: they count every call, even those made before a recording opened
        rec.llm_calls = int(st.get("llm_calls", rec.llm_calls))
        rec.prompt_tokens = int(st.get("prompt_tokens", rec.prompt_tokens))
        rec.completion_tokens = int(st.get("completion_tokens", rec.completion_tokens))
        rec.tool_calls = int(st.get("tool_calls", rec.tool_calls))
        rec.wall_s = float(st.get("wall_s", 0.0))
        if isinstance(st.get("by_role"), dict):
            rec.by_role = st["by_role"]
    if not rec.wall_s and rec.started and rec.ended:
        from agentui.clock import parse_iso

        try:
            rec.wall_s = round((parse_iso(rec.ended) - parse_iso(rec.started)).total_seconds(), 3)
        except ValueError:
            pass
    return rec


def _candidates(layout: DataLayout) -> dict[str, TaskRecord]:
    found: dict[str, TaskRecord] = {}
    if layout.tasks_dir.is_dir():
        for p in layout.tasks_dir.glob("*.jsonl"):
            tid = _task_id_of(p, ".jsonl")
            found.setdefault(tid, TaskRecord(tid)).log = p
    if layout.recordings_dir.is_dir():
        for p in layout.recordings_dir.glob("*.bus.jsonl"):
            tid = _task_id_of(p, ".bus.jsonl")
            found.setdefault(tid, TaskRecord(tid)).recording = p
    return found


def _mtime(rec: TaskRecord) -> float:
    best = 0.0
    for p in (rec.log, rec.recording):
        if p is not None:
            try:
                best = max(best, p.stat().st_mtime)
            except OSError:
                pass
    return best


def list_tasks(data_dir: Path | DataLayout, *, limit: int | None = None) -> list[TaskRecord]:
    """Past tasks, newest first. Only the newest `limit` files (by modification time) are read."""
    layout = data_dir if isinstance(data_dir, DataLayout) else DataLayout(Path(data_dir))
    recs = sorted(_candidates(layout).values(), key=lambda r: (_mtime(r), r.task_id), reverse=True)
    if limit is not None:
        recs = recs[:limit]
    out = [_summarise(r) for r in recs]
    out.sort(key=lambda r: (r.started, r.task_id), reverse=True)
    return out


def find_task(data_dir: Path | DataLayout, task_id: str) -> TaskRecord | None:
    layout = data_dir if isinstance(data_dir, DataLayout) else DataLayout(Path(data_dir))
    rec = _candidates(layout).get(task_id)
    return _summarise(rec) if rec is not None else None


def load_envelopes(rec: TaskRecord) -> list[Envelope]:
    """Every envelope of one task, in recorded order, for a replay. Bad lines are skipped."""
    src, from_log = (rec.recording, False) if rec.recording is not None else (rec.log, True)
    if src is None:
        return []
    out: list[Envelope] = []
    for d in _envelope_dicts(src, from_log=from_log, wanted=None):
        try:
            out.append(Envelope.from_dict(d))
        except (ValueError, TypeError, KeyError):
            continue
    return out


def turn_line(asked: str, final: Any) -> str:
    """One turn of a session as a follow-up sees it: what was asked → what came of it (a
    FinalResult's answer, or why it was not done). Bounded: it goes into every later prompt."""
    directive = getattr(final.directive, "value", str(final.directive))
    if directive in ("accept", "success"):
        came = final.answer or (final.output if isinstance(final.output, str) else "") or final.summary
        said = f"answer: {' '.join(str(came).split())[:200]}"
    else:
        said = f"not done ({directive}): {' '.join(final.summary.split())[:160]}"
    return f"{asked[:300]} → {said}"


def session_turns(rec: TaskRecord) -> list[str]:
    """The turns of the session this task ended, to continue it: the earlier turns the task was
    given (its UserInput's history), then its own. [] when nothing was recorded."""
    earlier: list[str] = []
    asked = ""
    final: FinalResult | None = None
    for env in load_envelopes(rec):
        p = env.payload
        if isinstance(p, UserInput) and not asked:
            earlier, asked = list(p.history), p.text
        elif isinstance(p, FinalResult):
            final = p
    asked = asked or rec.goal
    if not asked:
        return earlier
    return [*earlier, turn_line(asked, final) if final is not None else asked[:300]]


def replay_file(rec: TaskRecord, scratch: Path) -> Path | None:
    """A bus recording to replay: the task's own, or one written into `scratch` from its task log."""
    if rec.recording is not None:
        return rec.recording
    envs = load_envelopes(rec)
    if not envs:
        return None
    scratch.mkdir(parents=True, exist_ok=True)
    out = scratch / f"{rec.task_id}.bus.jsonl"
    out.write_text("".join(e.to_json() + "\n" for e in envs), encoding="utf-8", newline="\n")
    return out
