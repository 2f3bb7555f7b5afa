"""Where agentui keeps things: one module, built on platformdirs (STYLE rule 7).

Directories are created lazily by the code that writes into them, never at import.
Resolution order for the data dir: `--data-dir` flag > `AGENTUI_DATA_DIR` > config `data_dir` >
platformdirs user data dir. The config file: `AGENTUI_CONFIG` (a file path) > platformdirs config
dir / config.toml.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "agentui"


def default_config_file() -> Path:
    env = os.environ.get("AGENTUI_CONFIG")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def default_data_dir() -> Path:
    env = os.environ.get("AGENTUI_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


class DataLayout:
    """The files under one data dir. Nothing is created until `ensure()` or a writer asks."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser()

    @property
    def memory_db(self) -> Path:
        return self.root / "memory.leveldb"

    @property
    def audit_dir(self) -> Path:
        return self.root / "audit"

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    @property
    def recordings_dir(self) -> Path:
        return self.root / "recordings"

    def task_log(self, task_id: str) -> Path:
        return self.tasks_dir / f"{task_id}.jsonl"

    def bus_recording(self, task_id: str) -> Path:
        return self.recordings_dir / f"{task_id}.bus.jsonl"

    def ensure(self, *dirs: Path) -> None:
        for d in dirs or (self.root,):
            d.mkdir(parents=True, exist_ok=True)
