#!/usr/bin/env python3
"""Render every screen in every theme to SVG under screenshots/ (the README shows them), and the
main screen also to PNG when `rsvg-convert` (librsvg) is installed — the image GitHub shows.

Uses the bundled demo recording, a fixed clock and fixed IDs, so the images are reproducible."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentui.clock import FakeClock  # noqa: E402
from agentui.config import Config  # noqa: E402
from agentui.contracts import ClarificationRequest, ConfirmationRequest, FileDiff  # noqa: E402
from agentui.ids import SeededIds  # noqa: E402
from agentui.memory import InMemoryMemory  # noqa: E402
from agentui.tools.diffs import unified  # noqa: E402
from agentui.ui.app import AgentApp  # noqa: E402
from agentui.ui.modals import ClarifyModal, ConfirmModal  # noqa: E402

OUT = ROOT / "screenshots"
SIZE = (130, 36)


def history_dir() -> Path:
    """A data dir holding the demo task as a past session, for the history screen."""
    root = Path("/tmp/agentui-screens")
    shutil.rmtree(root, ignore_errors=True)
    (root / "recordings").mkdir(parents=True)
    shutil.copy(ROOT / "demo" / "recording.jsonl", root / "recordings" / "task-000001.bus.jsonl")
    return root


def app_for(theme: str) -> AgentApp:
    clock = FakeClock(datetime(2026, 3, 1, tzinfo=UTC))
    ids = SeededIds(5, readable=True)
    mem = InMemoryMemory(clock, ids)
    mem.remember("run the tests before committing", space="user")  # as `r` and /remember write it
    mem.remember("read_file on settings.ini failed", space="tool:read_file")
    return AgentApp(Config.model_validate({"ui": {"theme": theme}}), data_dir=history_dir(),
                    clock=clock, ids=ids, replay=ROOT / "demo" / "recording.jsonl", speed=0, animate=False,
                    memory=mem, workspace=Path("/tmp/agentui-demo/ws"),
                    config_file=Path("~/.config/agentui/config.toml"))


async def footer_ready(pilot) -> None:
    """A dialog's own footer draws its keys a frame or two after the dialog: wait for them."""
    from textual.widgets._footer import FooterKey

    for _ in range(40):
        await pilot.pause(0.05)
        if pilot.app.screen.query(FooterKey):
            break
    await pilot.pause(0.1)


async def shoot(theme: str, size: tuple[int, int] = SIZE, only_main: str = "") -> list[Path]:
    app = app_for(theme)
    written = []
    async with app.run_test(size=size) as pilot:
        await pilot.pause(1.0)

        def save(name: str) -> None:
            path = OUT / f"{name}-{theme}.svg"
            app.save_screenshot(filename=path.name, path=str(OUT))
            written.append(path)

        if only_main:
            save(only_main)
            return written
        save("main")
        for key, name in (("ctrl+o", "memory"), ("ctrl+d", "task-detail"), ("ctrl+r", "audit"), ("f1", "help"),
                          ("ctrl+s", "settings"), ("ctrl+g", "history")):
            await pilot.press(key)
            await pilot.pause(0.3)
            save(name)
            await pilot.press("escape")
            await pilot.pause(0.2)
        app.push_screen(ConfirmModal(ConfirmationRequest(
            request_id="r", task_id="t", tool="shell", command="rm -rf build", reasons=["rm deletes files"],
            cwd="/work/proj")))
        await footer_ready(pilot)
        save("confirm")
        await pilot.press("d")
        # a file write asks with the diff of what it would write
        old = "".join(f"port_{i} = {8000 + i}\n" for i in range(12))
        new = old.replace("port_3 = 8003", "port_3 = 9003") + "host = example.org\n"
        diff, added, removed = unified(old, new, "settings.ini")
        app.push_screen(ConfirmModal(ConfirmationRequest(
            request_id="r3", task_id="t", tool="write_file", command="/work/proj/settings.ini",
            reasons=["overwrites an existing file: settings.ini"], cwd="/work/proj",
            patterns=["write_file settings.ini"], scopes=["once", "task", "session"], writes=["settings.ini"],
            change=FileDiff(path="settings.ini", abs_path="/work/proj/settings.ini", diff=diff, old_text=old,
                            new_text=new, added=added, removed=removed))))
        await footer_ready(pilot)
        save("confirm-write")
        await pilot.press("d")
        app.push_screen(ClarifyModal(ClarificationRequest(request_id="r2", task_id="t",
                                                          question="Which files should I count?", round=1)))
        await pilot.pause(0.3)
        save("clarify")
    return written


def to_png(svg: Path) -> Path | None:
    exe = shutil.which("rsvg-convert")
    if exe is None:
        return None
    png = svg.with_suffix(".png")
    subprocess.run([exe, "-w", "1400", str(svg), "-o", str(png)], check=True)
    return png


async def main() -> None:
    OUT.mkdir(exist_ok=True)
    for theme in ("dark", "light"):
        shots = await shoot(theme)
        shots += await shoot(theme, (80, 24), only_main="main-80x24")
        for p in shots:
            print(p.relative_to(ROOT))
        png = to_png(OUT / f"main-{theme}.svg")
        print(png.relative_to(ROOT) if png else "rsvg-convert not found: no PNG (apt install librsvg2-bin)")


if __name__ == "__main__":
    asyncio.run(main())
