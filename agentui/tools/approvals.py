"""Scoped approvals: once, for this task, for this session, always for this project.

A broader-than-once approval stores *patterns* (program + subcommand: `git commit`, `npm test`),
never "yes to everything": a later command runs unasked only if every reason it needs a yes is
covered by a stored pattern. Secrets, hard denials and reasons without a pattern (a path only known
at run time) are never covered. A file write's pattern names that one file (`write_file notes.txt`):
it is kept apart from command patterns, for the task or the session only, and covers writes to that
file alone. The project list is a plain text file, one pattern
a line, that the user can read and edit; it lives in the data dir, out of the agent's reach.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict
from enum import StrEnum
from pathlib import Path

from agentui.tools.safety import Assessment, Verdict


class Scope(StrEnum):
    ONCE = "once"
    TASK = "task"
    SESSION = "session"
    PROJECT = "project"


_HEADER = (
    "# agentui project allow-list: commands matching these patterns run without asking\n"
    "# (inside the OS sandbox when there is one). One pattern a line, e.g. `git commit` or `npm test`;\n"
    "# delete a line to be asked again. The hard deny-list and secret paths are never allowed.\n"
)


def project_allowlist_path(data_root: Path, workspace: Path) -> Path:
    """`<data dir>/approvals/<dir name>-<hash>.txt`: per project, outside the workspace."""
    real = os.path.realpath(workspace)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(real) or "root")[:40]
    digest = hashlib.sha256(real.encode()).hexdigest()[:10]
    return Path(data_root) / "approvals" / f"{slug}-{digest}.txt"


class Approvals:
    """The approvals on record for one runtime (session) and, optionally, its project file."""

    def __init__(self, project_file: Path | None = None, workspace: Path | None = None) -> None:
        self.project_file = project_file
        self.workspace = workspace
        self._task: dict[str, set[str]] = defaultdict(set)
        self._session: set[str] = set()
        # file-write approvals: apart from command patterns, so neither can ever stand for the other
        self._task_files: dict[str, set[str]] = defaultdict(set)
        self._session_files: set[str] = set()

    def project_patterns(self) -> set[str]:
        """Read each time: the user may edit the file while agentui runs."""
        if self.project_file is None:
            return set()
        try:
            text = self.project_file.read_text(encoding="utf-8")
        except OSError:
            return set()
        return {line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")}

    def covering_scope(self, task_id: str, assessment: Assessment) -> Scope | None:
        """The scope whose patterns cover every reason of `assessment`, or None (ask)."""
        if assessment.verdict is not Verdict.ASK or assessment.human_only or assessment.once_only:
            return None
        if not assessment.patterns:
            return None
        if assessment.file_scoped:
            return self._covering_file(task_id, assessment.patterns)
        widest = Scope.TASK
        project = None
        for pattern in assessment.patterns:
            if pattern in self._task.get(task_id, ()):
                continue
            if pattern in self._session:
                widest = Scope.SESSION if widest is Scope.TASK else widest
                continue
            project = self.project_patterns() if project is None else project
            if pattern in project:
                widest = Scope.PROJECT
                continue
            return None
        return widest

    def _covering_file(self, task_id: str, patterns: tuple[str, ...]) -> Scope | None:
        if all(p in self._task_files.get(task_id, ()) for p in patterns):
            return Scope.TASK
        if all(p in self._task_files.get(task_id, ()) or p in self._session_files for p in patterns):
            return Scope.SESSION
        return None

    def record(self, scope: Scope, task_id: str, patterns: tuple[str, ...] | list[str], *,
               files: bool = False) -> None:
        if scope is Scope.ONCE or not patterns:
            return
        if files:  # never the project file: a file write is approved for the task or the session
            if scope is Scope.TASK:
                self._task_files[task_id].update(patterns)
            elif scope is Scope.SESSION:
                self._session_files.update(patterns)
            return
        if scope is Scope.TASK:
            self._task[task_id].update(patterns)
        elif scope is Scope.SESSION:
            self._session.update(patterns)
        elif scope is Scope.PROJECT:
            self._append_project(patterns)

    def _append_project(self, patterns: tuple[str, ...] | list[str]) -> None:
        if self.project_file is None:
            self._session.update(patterns)
            return
        known = self.project_patterns()
        new = [p for p in patterns if p not in known and "\n" not in p]
        if not new:
            return
        self.project_file.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.project_file.exists()
        with self.project_file.open("a", encoding="utf-8") as fh:
            if fresh:
                fh.write(_HEADER + (f"# project: {self.workspace}\n" if self.workspace else ""))
            fh.writelines(p + "\n" for p in new)

    def forget_task(self, task_id: str) -> None:
        self._task.pop(task_id, None)
        self._task_files.pop(task_id, None)
