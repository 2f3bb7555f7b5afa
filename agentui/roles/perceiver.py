"""R1 Perceiver (roles-v0.7 §R1): free text → TaskSpec, with full fidelity.

`raw_input` is the user's text verbatim; `intent` is the kind of work it asks for, a short
"verb object qualifier" phrase normalised by code (memory/workkind.py), which memory keys on.
R1 asks a ClarificationRequest only when no reasonable interpretation exists (at most
`pipeline.clarification_rounds` rounds; an empty answer means "proceed"), then commits. Greetings are
answered by code (no LLM call); short conversational
questions get a PerceiverReply from the one R1 call and never enter the pipeline. If R1's LLM is
down, the task still goes on with the intent code reads from the user's words.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from agentui.contracts import (
    ClarificationAnswer,
    ClarificationRequest,
    Constraints,
    Envelope,
    PerceiverReply,
    Role,
    TaskSpec,
    UserInput,
)
from agentui.llm.base import LLMInfraError
from agentui.memory.workkind import normalise_intent
from agentui.roles.base import RoleBase, RoleContext
from agentui.roles.prompts import load
from agentui.tools import fsaccess

_GREETING = re.compile(
    r"^\s*(hi|hello|hey|yo|hiya|howdy|thanks|thank you|thx|ty|good (morning|afternoon|evening)|"
    r"你好|您好|谢谢|hola|bonjour|salut|hallo|ciao)\b[\s!.,?]*(there|agentui)?[\s!.,?]*$",
    re.IGNORECASE,
)
# signs that a message is a task even if the model calls it chat: an imperative first word, a
# path or file name, or a question about the files here
_ACTION = re.compile(
    r"^\s*(please\s+)?(create|write|make|count|find|list|delete|remove|rename|move|copy|run|compute|"
    r"calculate|read|show|convert|fix|build|install|search|sort|replace|add|edit|open|print|generate|"
    r"download|check|clean|summari[sz]e)\b|\bhow many\b|\b(this|my|the) (folder|directory|repo|project|"
    r"workspace|file|files|disk)\b|[~.]?/\w|\b\w+\.(txt|md|py|js|ts|json|csv|log|ini|toml|yaml|yml|sh|pdf)\b",
    re.IGNORECASE,
)

INTENT_MAX = 80  # characters of the model's intent phrase

SYSTEM = load("perceiver").text  # agentui/roles/prompts/perceiver.md


class PerceiverOut(BaseModel):
    kind: Literal["task", "chat", "clarify"] = "task"
    # bounded in the schema (a grammar stops there); a longer reply is no phrase of the kind of work
    # (a copy of the request, say): it is dropped, not re-asked, and code reads the request instead
    intent: str = Field(default="", max_length=INTENT_MAX)
    scope: str | None = None
    reply: str = ""
    question: str = ""

    _drop_long = field_validator("intent", mode="before")(
        classmethod(lambda cls, v: "" if isinstance(v, str) and len(v.strip()) > INTENT_MAX else v))


def names_workspace(text: str, workspace: Path, limit: int = 2000) -> bool:
    """The text names something the workspace holds (a file or folder name, anywhere in its first
    `limit` entries): the answer is about this machine, so it goes through the checked pipeline,
    never the chat fast path."""
    words = {w.strip(".,;:!?()[]{}<>\"'`").casefold() for w in re.split(r"\s+", text)}
    words.discard("")
    if not words:
        return False
    seen = 0
    try:
        for _top, dirs, files in os.walk(workspace):
            for name in (*dirs, *files):
                seen += 1
                if name.casefold() in words or (len(name) > 3 and name.casefold().rsplit(".", 1)[0] in words
                                                and "." in name):
                    return True
                if seen >= limit:
                    return False
    except OSError:
        return False
    return False


def grounded_scope(scope: str, said: str, workspace: Path) -> str | None:
    """The parts of R1's scope the user named or the workspace has, else None (the whole
    workspace): a small model copies its prompt's field help and example into the scope, and a
    plan would then read paths nobody named."""
    kept = []
    for part in (p.strip() for p in scope.split(",")):
        if not part or part.casefold() in ("null", "none"):
            continue
        paths = [w.strip("'\"`()") for w in part.split() if "/" in w or "." in w.strip(".")]
        if _typed(part, said) or (paths and all(_named(w, said, workspace) for w in paths)) \
                or (not paths and " " not in part and _named(part, said, workspace)):
            kept.append(part)
    return ", ".join(kept) or None


def _typed(part: str, said: str) -> bool:
    """The user typed `part` as words of its own: "/" inside "docs/a.txt" or ".." inside "..." is not."""
    return re.search(rf"(?<![\w./~-]){re.escape(part)}(?![\w/~-]|\.[\w.])", said, re.IGNORECASE) is not None


def _named(path: str, said: str, workspace: Path) -> bool:
    return _typed(path, said) or fsaccess.holds(workspace, path)


class Perceiver(RoleBase):
    role = Role.PERCEIVER
    consumes = frozenset({"UserInput", "ClarificationAnswer"})

    def __init__(self, ctx: RoleContext) -> None:
        super().__init__(ctx)
        self._waiting: dict[str, asyncio.Future[str]] = {}

    async def on_cancel(self, task_id: str) -> None:
        for rid, fut in list(self._waiting.items()):
            if not fut.done() and rid.startswith(task_id):
                fut.cancel()

    async def handle(self, env: Envelope) -> None:
        p = env.payload
        if isinstance(p, ClarificationAnswer):
            fut = self._waiting.pop(p.request_id, None)
            if fut and not fut.done():
                fut.set_result(p.answer)
            return
        if isinstance(p, UserInput):
            await self._perceive(p)

    async def _perceive(self, u: UserInput) -> None:
        tid = u.task_id
        if _GREETING.match(u.text):
            reply = "Hello! Tell me what you would like done on this machine."
            if re.search(r"thank|thx|ty|谢谢", u.text, re.IGNORECASE):
                reply = "You're welcome."
            await self.publish(Role.USER, PerceiverReply(task_id=tid, text=reply), tid)
            return
        answers: list[str] = []
        out: PerceiverOut | None = None
        max_rounds = self.ctx.config.pipeline.clarification_rounds
        for rnd in range(1, max_rounds + 2):
            try:
                out = await self.ctx.llm("perceiver").structured(self._messages(u, answers), PerceiverOut)
            except LLMInfraError:
                raise  # the endpoint failed, not this role: the runtime ends the task
            except Exception as e:  # noqa: BLE001 - R1 down: carry the user's words through untouched
                self.ctx.log(tid, {"kind": "perceiver_fallback", "error": str(e)[:300]})
                out = None
                break
            if out.kind == "clarify" and out.question.strip() and rnd <= max_rounds:
                answer = await self._ask(tid, out.question.strip(), rnd)
                if not answer.strip():
                    break  # empty answer = proceed with what we have
                answers.append(answer.strip())
                continue
            break
        if out is not None and out.kind == "chat" and not answers and not _ACTION.search(u.text) and out.reply.strip() \
                and not await asyncio.to_thread(names_workspace, u.text, self.ctx.workspace):
            await self.publish(Role.USER, PerceiverReply(task_id=tid, text=out.reply.strip()), tid)
            return
        said = "\n".join([u.text, *answers])
        # the kind of work, not the request: memory groups tasks by it (memory/workkind.py)
        intent = normalise_intent(out.intent if out else "", said)
        scope = grounded_scope(out.scope, said, self.ctx.workspace) if out and out.scope else None
        spec = TaskSpec(task_id=tid, intent=intent[:500], constraints=Constraints(scope=scope),
                        raw_input=u.text, history=[t[:500] for t in u.history[-3:]])
        await self.publish(Role.PLANNER, spec, tid)

    def _messages(self, u: UserInput, answers: list[str]) -> list[dict[str, str]]:
        turns = u.history[-self.ctx.config.pipeline.history_turns:] if self.ctx.config.pipeline.history_turns else []
        parts = []
        if turns:
            parts.append("Earlier in this session:\n" + "\n".join(f"- {t[:200]}" for t in turns))
        parts.append(f"User message:\n{u.text}")
        for i, a in enumerate(answers, 1):
            parts.append(f"Answer to clarifying question {i}: {a}")
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]

    async def _ask(self, task_id: str, question: str, rnd: int) -> str:
        rid = f"{task_id}:{self.ctx.ids.new('req')}"
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = fut
        await self.publish(Role.USER, ClarificationRequest(request_id=rid, task_id=task_id,
                                                           question=question[:500], round=rnd), task_id)
        try:
            return await fut
        finally:
            self._waiting.pop(rid, None)

