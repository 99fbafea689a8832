"""The op registry: every op spec of ``ops/<family>/<op>.py``, found by walking that package.

A module that defines ``SPEC`` is an operation; nothing else lists them. The plan's discriminated
union, the schema index, the support matrix and every lowering's dispatch are computed from
``specs()``, so adding an operation is one module (plus its template macros, tests and example).
``tests/test_op_registry.py`` pins the set, as Zephyr pins its runners.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType

from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, SectionSpec

#: Families in catalog order (the schema index and ``targets show`` list operations in this order).
FAMILY_ORDER = (
    "gpio", "uart", "bus", "adc", "pwm", "timer", "watchdog", "dma", "handoff", "threads", "sensor", "log",
    "memory", "storage", "update", "ble", "wifi", "net",
    "power", "crypto",
    "events", "kernel",
    "clock", "can",
    "counter",
)  # fmt: skip


#: The package holding one module per operation (imported by name: the plan does not depend on it).
OPS_PACKAGE = "rac_fw.domains.firmware.ops"

#: The package holding one module per plan-level block (``SECTION``).
SECTIONS_PACKAGE = "rac_fw.domains.firmware.plan.sections"


def _modules() -> list[ModuleType]:
    package = importlib.import_module(OPS_PACKAGE)
    found: list[ModuleType] = []
    for family in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not family.ispkg:
            continue
        sub = importlib.import_module(f"{package.__name__}.{family.name}")
        for module in sorted(pkgutil.iter_modules(sub.__path__), key=lambda m: m.name):
            found.append(importlib.import_module(f"{sub.__name__}.{module.name}"))
    return found


def _order(spec: OpSpec) -> tuple[int, str]:
    family = FAMILY_ORDER.index(spec.family) if spec.family in FAMILY_ORDER else len(FAMILY_ORDER)
    return family, spec.kind


@cache
def specs() -> tuple[OpSpec, ...]:
    """Every op spec, in catalog order (family order, then kind)."""
    collected = [m.SPEC for m in _modules() if isinstance(getattr(m, "SPEC", None), OpSpec)]
    kinds = [s.kind for s in collected]
    duplicates = sorted({k for k in kinds if kinds.count(k) > 1})
    if duplicates:
        raise RuntimeError(f"operation kinds declared twice: {', '.join(duplicates)}")
    return tuple(sorted(collected, key=_order))


@cache
def _by_kind() -> dict[str, OpSpec]:
    return {s.kind: s for s in specs()}


def spec(kind: str) -> OpSpec:
    """The spec of operation ``kind`` (KeyError for an unknown kind: plans are validated first)."""
    return _by_kind()[kind]


def kinds() -> tuple[str, ...]:
    """Every operation kind, in catalog order."""
    return tuple(s.kind for s in specs())


def flagged(flag: Flag) -> frozenset[str]:
    """The kinds of operations carrying ``flag``."""
    return frozenset(s.kind for s in specs() if s.has(flag))


@cache
def sections() -> tuple[SectionSpec, ...]:
    """Every plan-level block spec (``plan/sections/<name>.py`` defining ``SECTION``), by field name."""
    package = importlib.import_module(SECTIONS_PACKAGE)
    found = []
    for module in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        loaded = importlib.import_module(f"{package.__name__}.{module.name}")
        if isinstance(getattr(loaded, "SECTION", None), SectionSpec):
            found.append(loaded.SECTION)
    return tuple(sorted(found, key=lambda s: s.name))


def section_values(plan: object) -> list[tuple[SectionSpec, object]]:
    """The plan-level blocks ``plan`` sets, with their values (blocks left at None are absent)."""
    return [(s, getattr(plan, s.name)) for s in sections() if getattr(plan, s.name, None) is not None]
