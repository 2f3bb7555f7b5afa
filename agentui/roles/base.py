"""What every role shares: its seat on the bus, per-task handler tasks, cancellation, errors.

A role subscribes to the payload types it consumes and handles each envelope in its own asyncio
task, grouped by task id, so a slow LLM call never stops the role from draining its queue and a
cancelled task's handlers (and, through them, tool subprocesses) are cancelled together.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentui.bus import Bus, BusClosed
from agentui.clock import Clock, SystemClock
from agentui.config import Config
from agentui.contracts import Contract, Envelope, Role
from agentui.ids import IdFactory, UuidIds
from agentui.llm.base import LLMInfraError

log = logging.getLogger("agentui.roles")

#: the task the current handler works for (routes LLM traces and tool logs to its task log)
current_task: contextvars.ContextVar[str | None] = contextvars.ContextVar("agentui_task", default=None)

ConfirmFn = Callable[[str, str, str | None, str, list[str]], Awaitable[bool]]


@dataclass
class RoleContext:
    """Everything a role may use. Roles never hold references to each other."""

    bus: Bus
    config: Config
    clock: Clock = field(default_factory=SystemClock)
    ids: IdFactory = field(default_factory=UuidIds)
    pool: Any = None  # agentui.llm.LLMPool | None
    memory: Any = None  # agentui.memory.MemoryService
    tools: Any = None  # agentui.tools.ToolRegistry
    workspace: Path = field(default_factory=Path.cwd)
    trace: Callable[[str, dict[str, Any]], None] | None = None  # (task_id, record) → task log

    def llm(self, role: str) -> Any:
        if self.pool is None:
            from agentui.llm import LLMNotConfigured

            raise LLMNotConfigured("no LLM is configured")
        return self.pool.for_role(role)

    def log(self, task_id: str | None, record: dict[str, Any]) -> None:
        if self.trace is not None and task_id:
            try:
                self.trace(task_id, record)
            except Exception:  # noqa: BLE001 - logging must never break a role
                log.exception("task log write failed")


class RoleBase:
    """Subclasses set `role` and `consumes`, and implement `handle(env)`."""

    role: Role
    consumes: frozenset[str] = frozenset()
    receiver_only: bool = True  # only envelopes addressed to this role (observers set False)
    serial: bool = False  # handle one envelope at a time (state machines that must not interleave)

    def __init__(self, ctx: RoleContext) -> None:
        self.ctx = ctx
        self.bus = ctx.bus
        self._tasks: dict[str, set[asyncio.Task[Any]]] = defaultdict(set)
        self._sub = self.bus.subscribe(
            f"{self.role.value}", types=self.consumes | {"TaskCancelled"},
            receiver=None,
        )
        self._lock = asyncio.Lock()

    async def publish(self, receiver: Role, payload: Contract, task_id: str | None) -> Envelope | None:
        try:
            return await self.bus.publish(self.role, receiver, payload, task_id=task_id)
        except BusClosed:
            return None

    def accepts(self, env: Envelope) -> bool:
        if env.type not in self.consumes:
            return False
        return not self.receiver_only or env.receiver == self.role

    async def run(self) -> None:
        try:
            async for env in self._sub:
                if env.type == "TaskCancelled":
                    self.cancel_task(env.task_id or "")
                    await self.on_cancel(env.task_id or "")
                    continue
                if not self.accepts(env) or self.bus.is_dropped(env.task_id):
                    continue
                tid = env.task_id or ""
                t = asyncio.create_task(self._guarded(env), name=f"{self.role.value}:{env.type}")
                self._tasks[tid].add(t)
                t.add_done_callback(functools.partial(self._forget_task, tid))
        finally:
            for ts in list(self._tasks.values()):
                for t in list(ts):
                    t.cancel()

    def _forget_task(self, tid: str, t: asyncio.Task[Any]) -> None:
        self._tasks[tid].discard(t)

    async def _guarded(self, env: Envelope) -> None:
        token = current_task.set(env.task_id)
        try:
            if self.serial:
                async with self._lock:
                    await self.handle(env)
            else:
                await self.handle(env)
        except asyncio.CancelledError:
            raise
        except BusClosed:
            pass
        except LLMInfraError as e:  # the runtime has ended the task: no role fallback, no replan
            self.ctx.log(env.task_id, {"kind": "role_infra_failure", "role": self.role.value, "on": env.type,
                                       "error": str(e)[:300]})
        except Exception as e:  # noqa: BLE001 - a role error must surface, never hang the task
            log.exception("%s failed on %s", self.role.value, env.type)
            self.ctx.log(env.task_id, {"kind": "role_error", "role": self.role.value, "on": env.type,
                                       "error": f"{type(e).__name__}: {e}"})
            await self.on_error(env, e)
        finally:
            current_task.reset(token)

    def cancel_task(self, task_id: str) -> None:
        for t in list(self._tasks.get(task_id, ())):
            t.cancel()

    async def on_cancel(self, task_id: str) -> None:
        """Forget per-task state. Default: nothing."""

    async def on_error(self, env: Envelope, exc: Exception) -> None:
        """Turn an unexpected error into the role's failure message. Default: nothing."""

    async def handle(self, env: Envelope) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:
        self._sub.close()


async def gather_roles(roles: Iterable[RoleBase]) -> None:
    tasks = [asyncio.create_task(r.run(), name=f"role:{r.role.value}") for r in roles]
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
