"""Behaviour tasks: requirements about what an application *does*, judged by running it.

Each task of ``behaviour.yaml`` names an example plan as its reference (``examples/<example>.yaml``, changed by
its ``patch``), so a requirement and its reference never drift apart from the example an agent reads. Its
checks Φ are derived from the reference, not written by hand:

* ``trace`` — where a runner exists for the cell (STM32F407 bare metal in QEMU here; a board or native_sim
  elsewhere), the run's console must match the trace the reference plan predicts, line for line
  (:mod:`rac_fw.domains.firmware.tasks.judge`);
* ``string`` — on every cell, each constant text the requirement makes the console print is a string literal
  on a live path of the artifact (the C-model check that stands where nothing runs).
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from rac_fw.contract import apply_patch
from rac_fw.domains.firmware.tasks.checks import Check, CString, Trace
from rac_fw.resources import data_dir

_DATA = Path(__file__).resolve().parent / "behaviour.yaml"
FAMILY = "behaviour"
#: Shortest constant console text worth a string check (shorter pieces are separators such as ", ").
MIN_TEXT = 4


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PatchStep(_Strict):
    path: list[str | int] = Field(min_length=1)
    value: Any


class BehaviourTask(_Strict):
    """One requirement about behaviour, its reference (an example plan, patched) and the cells it is posed on."""

    name: str = Field(pattern=r"^[a-z0-9_]{1,40}$")
    example: str = Field(pattern=r"^behaviour_[a-z0-9_]{1,40}$")
    requirement: str = Field(min_length=10, max_length=600)
    patch: list[PatchStep] = Field(default_factory=list)
    cells: list[str] | None = Field(default=None, description="target/framework pairs (default: the file's).")


class BehaviourSuite(_Strict):
    cells: list[str] = Field(min_length=1)
    tasks: list[BehaviourTask] = Field(min_length=1)


def reference(task: BehaviourTask) -> dict[str, Any]:
    """The task's reference plan without target and framework (the cell supplies them)."""
    path = data_dir("examples") / f"{task.example}.yaml"
    plan = yaml.safe_load(path.read_text(encoding="utf-8"))
    if task.patch:
        plan = apply_patch(plan, [{"op": "replace", "path": s.path, "value": s.value} for s in task.patch])
    return {k: v for k, v in plan.items() if k not in ("target", "framework")}


def _texts(steps: Any) -> list[str]:
    """The constant text pieces of every ``print`` in ``steps`` (nested blocks included), in order."""
    from rac_fw.domains.firmware.plan.behaviour.steps.print import split

    found: list[str] = []
    if isinstance(steps, dict):
        for key, value in steps.items():
            if key == "print" and isinstance(value, str):
                found += [body for kind, body, _ in split(value) if kind == "text"]
            else:
                found += _texts(value)
    elif isinstance(steps, list):
        for item in steps:
            found += _texts(item)
    return found


def checks(plan: dict[str, Any]) -> tuple[Check, ...]:
    """The task's checks Φ, derived from its reference plan: the trace, and the console's constant texts."""
    texts = [t.strip() for t in _texts(plan.get("behaviour", {}))]
    kept = list(dict.fromkeys(t for t in texts if len(t) >= MIN_TEXT))
    strings: list[Check] = [CString(kind="string", text=t[:120], why="the requirement prints it") for t in kept]
    trace: Check = Trace(kind="trace", why="the run prints what the reference plan predicts, line for line")
    return (trace, *strings)


@cache
def _suite() -> BehaviourSuite:
    return BehaviourSuite.model_validate(yaml.safe_load(_DATA.read_text(encoding="utf-8")))


def behaviour_tasks() -> list[Any]:
    """Every behaviour task, one per (requirement, cell), as :class:`~rac_fw.domains.firmware.tasks.Task`."""
    from rac_fw.domains.firmware.tasks import Task

    suite = _suite()
    tasks = []
    for entry in suite.tasks:
        plan = reference(entry)
        derived = checks(plan)
        for cell in entry.cells or suite.cells:
            target, _, framework = cell.partition("/")
            tasks.append(Task(
                id=f"fw/{FAMILY}/{entry.name}@{target}-{framework}", family=FAMILY, name=entry.name,
                requirement=entry.requirement, target=target, framework=framework, status="expressible",
                reference=copy.deepcopy(plan), checks=derived))  # fmt: skip
    return tasks
