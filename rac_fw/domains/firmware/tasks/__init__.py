"""The firmware task suite: requirements in this project's own words, each with checks Φ and a reference.

A *task* is one piece of real firmware work on one target and framework: a requirement an engineer
would write, the checks that judge any artifact for it (the generated tree of a plan, a model's
hand-written sources, a user's app) independently of how it was produced, and a reference plan that
calibration runs model-free. Tasks whose family the plan language cannot state yet are listed with
status ``unexpressible`` and the reason, never faked with a plan that does something else.

The data lives in ``suite/<family>.yaml``: a *behaviour* names a requirement, a reference plan and its
checks once, and the cells (``target/framework``) it is posed on; each cell is one task, id
``fw/<family>/<name>@<target>-<framework>``. A bare target id stays a task too (an open task on that
target, no checks beyond the verifier), so ``start_episode("firmware", "nrf52840")`` keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from rac_fw.domains.firmware.tasks.checks import Check

_SUITE = Path(__file__).resolve().parent / "suite"

Status = Literal["expressible", "unexpressible"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Behaviour(_Strict):
    """One requirement posed on several cells; the reference plan carries no target or framework."""

    name: str = Field(pattern=r"^[a-z0-9_]{1,40}$")
    family: str | None = Field(default=None, pattern=r"^[a-z0-9_]{1,24}$", description="Overrides the file's family.")
    requirement: str = Field(min_length=10, max_length=600)
    cells: list[str] = Field(min_length=1, description="target/framework pairs the requirement is posed on")
    plan: dict[str, Any] | None = Field(default=None, description="Reference plan (absent when unexpressible).")
    checks: list[Check] = Field(default_factory=list)
    console: list[str] = Field(default_factory=list, description="Ordered console regexes, where the target runs.")
    obligation: str | None = Field(default=None, description="The hardware obligation that makes this cell differ.")
    missing: str | None = Field(default=None, description="Why the plan language cannot state it (unexpressible).")
    flawed: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict, description="Target id → a patch that makes the reference break this cell's "
        "obligation (the repairing agent's first proposal; the evidence must carry the fix).")


class FamilyFile(_Strict):
    family: str = Field(pattern=r"^[a-z0-9_]{1,24}$")
    behaviours: list[Behaviour]


@dataclass(frozen=True)
class Task:
    """One task of the suite: a requirement on one target and framework, its checks and reference."""

    id: str
    family: str
    name: str
    requirement: str
    target: str
    framework: str
    status: Status
    reference: dict[str, Any] | None = None
    checks: tuple[Check, ...] = ()
    console: tuple[str, ...] = ()
    obligation: str | None = None
    missing: str | None = None
    flawed: tuple[dict[str, Any], ...] = ()

    def reference_plan(self) -> dict[str, Any]:
        """The reference plan as submitted for this task (its target and framework filled in)."""
        if self.reference is None:
            raise LookupError(f"task {self.id} is {self.status}: it has no reference plan ({self.missing})")
        return {"target": self.target, "framework": self.framework, **self.reference}


class TaskSuiteError(ValueError):
    """A suite data file that does not load (located: file and behaviour)."""


def _expand(family: FamilyFile, source: str) -> list[Task]:
    tasks = []
    for b in family.behaviours:
        status: Status = "expressible" if b.plan is not None else "unexpressible"
        if (b.plan is None) == (b.missing is None):
            raise TaskSuiteError(f"{source}: {b.name}: give exactly one of `plan` and `missing`")
        fam = b.family or family.family
        for cell in b.cells:
            target, _, framework = cell.partition("/")
            if not target or not framework:
                raise TaskSuiteError(f"{source}: {b.name}: cell {cell!r} is not target/framework")
            tasks.append(Task(
                id=f"fw/{fam}/{b.name}@{target}-{framework}", family=fam, name=b.name,
                requirement=b.requirement, target=target, framework=framework, status=status,
                reference=b.plan, checks=tuple(b.checks), console=tuple(b.console), obligation=b.obligation,
                missing=b.missing, flawed=tuple(b.flawed.get(target, ()))))
    return tasks


@cache
def suite() -> dict[str, Task]:
    """Every task of the suite by id, in file order (``suite/*.yaml`` sorted by name)."""
    tasks: dict[str, Task] = {}
    for path in sorted(_SUITE.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        try:
            family = FamilyFile.model_validate(raw)
        except ValueError as exc:
            raise TaskSuiteError(f"{path.name}: {exc}") from None
        for task in _expand(family, path.name):
            if task.id in tasks:
                raise TaskSuiteError(f"{path.name}: duplicate task id {task.id}")
            tasks[task.id] = task
    from rac_fw.domains.firmware.tasks.behaviour import behaviour_tasks  # its data: tasks/behaviour.yaml

    for task in behaviour_tasks():
        if task.id in tasks:
            raise TaskSuiteError(f"behaviour.yaml: duplicate task id {task.id}")
        tasks[task.id] = task
    return tasks


def get_task(task_id: str) -> Task | None:
    """The suite task named ``task_id`` (None for a bare target id or an unknown name)."""
    return suite().get(task_id)


def expressible() -> list[Task]:
    return [t for t in suite().values() if t.status == "expressible"]
