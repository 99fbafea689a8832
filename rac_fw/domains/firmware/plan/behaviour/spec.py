"""What a step spec declares, and the step registry: one module per step kind under ``behaviour/steps/``.

A step is a one-key mapping in the plan (``- wait: 100ms``, ``- if: {cond: …, then: […]}``); its module
holds the key's model, ``compile`` (plan → :class:`~rac_fw.domains.firmware.plan.behaviour.ir.Stmt`, typing
every expression and locating every error), ``predict`` (what it does in the trace predictor) and its
properties the obligations ask (may it block? its duration?). Each framework renders it through the macro
named after the kind in ``templates/behaviour/steps.c.j2``, calling the framework's runtime macros
(``templates/<framework>/behaviour_rt.c.j2``), so no lowering branches on a step kind.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from rac_fw.schemas import first_sentence

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.ir import Stmt
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine

STEPS_PACKAGE = "rac_fw.domains.firmware.plan.behaviour.steps"


@dataclass(frozen=True)
class StepSpec:
    """Everything about one step kind, declared once."""

    model: type[Any]
    """The one-field pydantic model; the field's alias (or name) is the step's key."""
    compile: Callable[[Compiler, Any, list[str | int]], Stmt]
    """``compile(compiler, value, path)``: the typed statement (errors are added to the compiler)."""
    predict: Callable[[Machine, Stmt], None]
    """Runs the statement in the trace predictor."""
    blocking: bool = False
    """It may wait (console output, a delay): never run in an interrupt handler."""
    cost_ms: Callable[[Stmt, Any], float] | None = None
    """Its duration in ms on the target (``cost_ms(stmt, costs)``), nested blocks excluded; None: negligible."""

    @property
    def kind(self) -> str:
        field_name, info = next(iter(self.model.model_fields.items()))
        return str(info.alias or field_name)

    @property
    def summary(self) -> str:
        return first_sentence(self.model.__doc__, self.kind)


@cache
def step_specs() -> tuple[StepSpec, ...]:
    """Every step spec, by kind (the modules under ``behaviour/steps/`` defining ``STEP``)."""
    package = importlib.import_module(STEPS_PACKAGE)
    found = []
    for module in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        loaded = importlib.import_module(f"{STEPS_PACKAGE}.{module.name}")
        if isinstance(getattr(loaded, "STEP", None), StepSpec):
            found.append(loaded.STEP)
    kinds = [s.kind for s in found]
    twice = sorted({k for k in kinds if kinds.count(k) > 1})
    if twice:
        raise RuntimeError(f"step kinds declared twice: {', '.join(twice)}")
    return tuple(sorted(found, key=lambda s: s.kind))


@cache
def step_spec(kind: str) -> StepSpec:
    return {s.kind: s for s in step_specs()}[kind]


def step_kinds() -> tuple[str, ...]:
    return tuple(s.kind for s in step_specs())
