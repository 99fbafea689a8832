"""Parse a plan from data or a YAML/JSON file; every problem becomes located evidence, never a traceback.

``parse_plan`` turns pydantic's errors into :class:`~rac_fw.contract.Evidence` whose ``location`` is
the plan field path (``operations[2].baud``), with what was expected and, where the fix is obvious
(a misspelt op or field), a relaxation whose patch makes it.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rac_fw.contract import Evidence, Relaxation
from rac_fw.documents import DocumentError, read_document
from rac_fw.domains.firmware.plan.channels import AdcDtChannel, AdcPinChannel
from rac_fw.domains.firmware.plan.model import OPERATION_KINDS, OPERATION_MODELS, Plan, op_kind
from rac_fw.domains.firmware.plan.paths import PathPart, format_path
from rac_fw.domains.firmware.plan.resources import Buffer, Device, PinUse, Resources, Thread

#: Union tags pydantic inserts into error locations (operation kinds, ADC channel kinds).
_TAGS = frozenset(OPERATION_KINDS) | {"pin", "dt"}


class PlanError(ValueError):
    """The plan is malformed; ``evidence`` holds one located item per problem."""

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(f"{e.location}: {e.message}" for e in evidence))


def _real_path(data: Any, loc: tuple[PathPart, ...]) -> list[PathPart]:
    """Drop the union tags pydantic adds to ``loc`` by walking the input alongside it."""
    path: list[PathPart] = []
    current: Any = data
    for index, part in enumerate(loc):
        following = loc[index + 1] if index + 1 < len(loc) else None
        is_key = isinstance(current, dict) and part in current
        if (
            part in _TAGS
            and isinstance(current, dict)
            and (not is_key or (following is not None and following in current))
        ):
            continue
        path.append(part)
        current = _child(current, part)
    return path


def _child(container: Any, part: PathPart) -> Any:
    """``container[part]`` when it exists, else None."""
    if isinstance(container, list) and isinstance(part, int):
        return container[part] if 0 <= part < len(container) else None
    return container.get(part) if isinstance(container, dict) else None


_RESOURCE_MODELS: dict[str, type[BaseModel]] = {
    "buffers": Buffer,
    "pins": PinUse,
    "devices": Device,
    "threads": Thread,
}


def _model_at(data: Any, path: list[PathPart]) -> type[BaseModel] | None:
    """The model whose fields apply to the object at ``path`` (for field-name suggestions)."""
    if not path:
        return Plan
    if path == ["resources"]:
        return Resources
    if len(path) == 3 and path[0] == "resources" and isinstance(path[1], str):
        return _RESOURCE_MODELS.get(path[1])
    if path[0] == "operations" and len(path) >= 2 and isinstance(path[1], int):
        ops = data.get("operations") if isinstance(data, dict) else None
        if not (isinstance(ops, list) and 0 <= path[1] < len(ops) and isinstance(ops[path[1]], dict)):
            return None
        if len(path) == 2:
            kind = ops[path[1]].get("op")
            return next((m for m in OPERATION_MODELS if op_kind(m) == kind), None)
        if path[2] in ("channel", "channels"):
            return AdcDtChannel if "dt" in path or _looks_dt(data, path) else AdcPinChannel
    return None


def _looks_dt(data: Any, path: list[PathPart]) -> bool:
    current: Any = data
    for part in path:
        current = _child(current, part)
    return isinstance(current, dict) and ("path" in current or "channel_index" in current)


def _evidence(data: Any, error: Any, where: str | None) -> Evidence:
    path = _real_path(data, tuple(error["loc"]))
    text = format_path(path)
    location = f"{where}: {text}" if where else text
    kind, ctx = error["type"], error.get("ctx") or {}
    relaxations: list[Relaxation] = []
    if kind in ("union_tag_invalid", "union_tag_not_found") and "op" in str(ctx.get("discriminator", "")):
        expected = ctx.get("expected_tags", "")
        tag = ctx.get("tag")
        message = f"unknown operation {tag!r}; expected one of {expected}" if tag else "missing 'op'"
        names = [t.strip(" '") for t in str(expected).split(",")]
        for near in difflib.get_close_matches(str(tag or ""), names, n=3, cutoff=0.6):
            relaxations.append(
                Relaxation(
                    description=f"use op {near!r}",
                    patch=[{"op": "replace", "path": [*path, "op"], "value": near}],
                )
            )
        return Evidence(code="E_PLAN_UNKNOWN_OP", message=message, location=location, relaxations=relaxations)
    if kind == "extra_forbidden":
        field = str(path[-1]) if path else ""
        model = _model_at(data, path[:-1]) if path else None
        known = sorted(model.model_fields) if model is not None else []
        message = f"unknown field {field!r}" + (f"; fields here: {', '.join(known)}" if known else "")
        for near in difflib.get_close_matches(field, known, n=1, cutoff=0.6):
            relaxations.append(
                Relaxation(
                    description=f"rename {field!r} to {near!r}",
                    patch=[
                        {"op": "remove", "path": path},
                        {"op": "add", "path": [*path[:-1], near], "value": error.get("input")},
                    ],
                )
            )
        relaxations.append(Relaxation(description=f"remove {field!r}", patch=[{"op": "remove", "path": path}]))
        return Evidence(code="E_PLAN_UNKNOWN_FIELD", message=message, location=location, relaxations=relaxations)
    got = error.get("input")
    shown = "" if kind == "missing" or isinstance(got, dict | list) else f" (got {got!r})"
    return Evidence(code="E_PLAN_FIELD", message=f"{error['msg']}{shown}", location=location, objects=[text])


def parse_plan(data: Any, source: str | None = None) -> Plan:
    """Validate plan data; raise :class:`PlanError` with every problem located (``source: path``)."""
    if not isinstance(data, dict):
        where = source or "plan"
        raise PlanError(
            [Evidence(code="E_PLAN_FIELD", message="a plan is a mapping with 'operations'", location=where)]
        )
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        raise PlanError([_evidence(data, error, source) for error in exc.errors()]) from None


def load_plan(path: Path | str) -> Plan:
    """Read a plan from a ``.json`` or YAML file; file and syntax errors are located evidence too."""
    try:
        data = read_document(path, what="plan")
    except DocumentError as exc:
        raise PlanError(exc.evidence) from None
    return parse_plan(data, str(path))
