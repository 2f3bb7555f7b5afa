"""ACP sessions on the data dir: listed and loaded from the same task history the TUI shows
(:mod:`agentui.history`).

An ACP session is a list of agentui tasks in one workspace, kept as `acp/sessions/<id>.json`
(canonical JSON). A past task that belongs to no ACP session (a TUI or `agentui run` task) is
listed as a one-task session whose id is the task id, so an editor can reopen it too. A load
replays each task's recorded envelopes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agentui.contracts import Envelope, canonical_json
from agentui.history import TaskRecord, find_task, list_tasks, load_envelopes
from agentui.paths import DataLayout

_SAFE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,120}$")
LIST_LIMIT = 500  # past tasks read for a listing (newest first)


@dataclass
class SessionRecord:
    session_id: str
    cwd: str
    title: str = ""
    created_at: str = ""
    updated_at: str = ""
    task_ids: list[str] = field(default_factory=list)


def _from_task(t: TaskRecord) -> SessionRecord:
    return SessionRecord(session_id=t.task_id, cwd=t.workspace, title=t.goal[:200], created_at=t.started,
                         updated_at=t.ended or t.started, task_ids=[t.task_id])


class SessionStore:
    def __init__(self, layout: DataLayout) -> None:
        self.layout = layout
        self.dir = layout.root / "acp" / "sessions"

    def _path(self, session_id: str) -> Path:
        if not _SAFE_ID.match(session_id):
            raise KeyError(session_id)
        return self.dir / f"{session_id}.json"

    def save(self, rec: SessionRecord) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self._path(rec.session_id)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(canonical_json(asdict(rec)) + "\n", encoding="utf-8")
        os.replace(tmp, path)

    def _saved(self, path: Path) -> SessionRecord | None:
        with contextlib.suppress(OSError, ValueError, TypeError):
            return SessionRecord(**json.loads(path.read_text(encoding="utf-8")))
        return None

    def get(self, session_id: str) -> SessionRecord | None:
        """An ACP session, or a past task as a one-task session; None if neither exists."""
        try:
            path = self._path(session_id)
        except KeyError:
            return None
        if path.is_file():
            return self._saved(path)
        task = find_task(self.layout, session_id)
        return _from_task(task) if task is not None else None

    def list(self, cwd: str | None = None) -> list[SessionRecord]:
        """Newest first: ACP sessions, and past tasks that belong to none of them."""
        out: list[SessionRecord] = []
        owned: set[str] = set()
        if self.dir.is_dir():
            for path in self.dir.glob("*.json"):
                rec = self._saved(path)
                if rec is not None:
                    out.append(rec)
                    owned.update(rec.task_ids)
        out.extend(_from_task(t) for t in list_tasks(self.layout, limit=LIST_LIMIT) if t.task_id not in owned)
        if cwd:
            want = os.path.realpath(cwd)
            out = [r for r in out if r.cwd and os.path.realpath(r.cwd) == want]
        return sorted(out, key=lambda r: (r.updated_at, r.session_id), reverse=True)

    def replay(self, rec: SessionRecord) -> list[Envelope]:
        envs: list[Envelope] = []
        for tid in rec.task_ids:
            task = find_task(self.layout, tid)
            if task is not None:
                envs.extend(load_envelopes(task))
        return envs
