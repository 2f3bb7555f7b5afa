"""The planner's reply schema (what the model must write) and its state for one task across replan
rounds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentui.contracts import PlanDirective, TaskSpec


class PlanCriterion(BaseModel):
    # the reply calls the check `verify`: reply schemas list their keys in sorted order, and a model
    # that meets the check before the criterion writes the criterion's words into it
    model_config = ConfigDict(populate_by_name=True)

    criterion: str = Field(min_length=1)
    mode: Literal["verifiable", "plausible"] = "verifiable"
    check: str = Field(default="", max_length=200, alias="verify")


def _check_required(schema: dict[str, Any]) -> None:
    schema["required"] = sorted({*schema.get("required", []), "verify"})


# a task criterion: the reply schema asks for its `check` (a grammar-constrained model then writes
# one), though a reply without it still parses. A docstring here would go into the schema the model
# sees, as the criterion's description; the reply models carry comments instead.
class TaskCriterion(PlanCriterion):
    model_config = ConfigDict(populate_by_name=True, json_schema_extra=_check_required)


def _coerce_criteria(v: Any) -> Any:
    """A criterion given as a bare string, or one criterion not in a list, is read as one."""
    if isinstance(v, str):
        v = [v]
    if isinstance(v, list):
        return [{"criterion": x} if isinstance(x, str) else x for x in v]
    return v


class PlanStep(BaseModel):
    intent: str = Field(min_length=1)
    success_criteria: list[PlanCriterion] = Field(min_length=1)
    sequence: int = Field(default=1, ge=1, le=20)
    tools: list[str] = Field(default_factory=list)
    context: str = ""

    @field_validator("success_criteria", mode="before")
    @classmethod
    def _c(cls, v: Any) -> Any:
        return _coerce_criteria(v)


class PlanOut(BaseModel):
    task_criteria: list[TaskCriterion] = Field(min_length=1, max_length=8)
    subtasks: list[PlanStep] = Field(min_length=1, max_length=4)

    @field_validator("task_criteria", mode="before")
    @classmethod
    def _c(cls, v: Any) -> Any:
        return _coerce_criteria(v)


@dataclass
class PlanState:
    """What the planner keeps for one task across its replan rounds."""

    spec: TaskSpec
    round: int = 0
    last_plan: PlanOut | None = None
    last_blocked: set[str] = field(default_factory=set)  # the tools blocked when last_plan was made
    last_blocked_targets: set[str] = field(default_factory=set)  # … and the targets
    directive: PlanDirective | None = None
    blocked_tools: set[str] = field(default_factory=set)
    blocked_targets: list[str] = field(default_factory=list)
    # (tool, target, rule): what memory says must not be done
    memory_constraints: list[tuple[str, str, str]] = field(default_factory=list)
    caution_ok: bool = False
    located: list[str] = field(default_factory=list)  # named paths found elsewhere in the workspace
