"""Repair evidence for the obligations op specs declare themselves (``OpSpec.checks``).

The same shape as ``obligations.evidence`` (a located violation, magnitudes with units, relaxations
carrying patches), restated over the contract because an op spec may not import ``obligations``:
the obligations import the op specs, and the package graph stays acyclic
(``tests/test_import_graph.py``). Moving ``obligations/evidence.py`` under ``plan/`` would let both
sides share one module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rac_fw.contract import Evidence, Magnitude, Relaxation
from rac_fw.domains.firmware.plan.paths import PathPart, format_path

Path = list[PathPart]

#: Stack given to a thread a relaxation declares: above every framework's minimum (ESP-IDF: 2048 B).
DECLARED_STACK_BYTES = 4096


def replace(path: Path, value: Any) -> dict[str, Any]:
    return {"op": "replace", "path": list(path), "value": value}


def add(path: Path, value: Any) -> dict[str, Any]:
    return {"op": "add", "path": list(path), "value": value}


def remove(path: Path) -> dict[str, Any]:
    return {"op": "remove", "path": list(path)}


def relax(description: str, *steps: dict[str, Any]) -> Relaxation:
    return Relaxation(description=description, patch=list(steps))


def measure(name: str, value: float, unit: str) -> Magnitude:
    return Magnitude(name=name, value=round(value, 4) if isinstance(value, float) else value, unit=unit)


def violation(
    code: str,
    message: str,
    path: Path,
    objects: Sequence[str] = (),
    magnitudes: Sequence[Magnitude] = (),
    relaxations: Sequence[Relaxation] = (),
) -> Evidence:
    return Evidence(
        code=code,
        message=message,
        location=format_path(path),
        objects=list(dict.fromkeys(objects)),
        magnitudes=list(magnitudes),
        relaxations=list(relaxations),
    )
