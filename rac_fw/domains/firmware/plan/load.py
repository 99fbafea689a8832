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
from rac_fw.domains.firmware.plan.behaviour.model import TRIGGER_FIELDS, TRIGGER_KEYS
from rac_fw.domains.firmware.plan.behaviour.spec import step_kinds
from rac_fw.domains.firmware.plan.channels import AdcDtChannel, AdcPinChannel
from rac_fw.domains.firmware.plan.model import OPERATION_KINDS, OPERATION_MODELS, Plan, op_kind
from rac_fw.domains.firmware.plan.paths import PathPart, format_path
from rac_fw.domains.firmware.plan.resources import Buffer, Device, PinUse, Resources, Thread
from rac_fw.limits import LimitExceeded, NumberOutOfRange, check_count, check_document

#: Union tags pydantic inserts into error locations (operation kinds, ADC channel kinds).
_TAGS = frozenset(OPERATION_KINDS) | {"pin", "dt"} | frozenset(step_kinds()) | frozenset(TRIGGER_KEYS)


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
    if kind in ("union_tag_invalid", "union_tag_not_found") and "_key()" in str(ctx.get("discriminator", "")):
        return _behaviour_tag(data, path, location, error)
    got = error.get("input")
    shown = "" if kind == "missing" or isinstance(got, dict | list) else f" (got {got!r})"
    return Evidence(code="E_PLAN_FIELD", message=f"{error['msg']}{shown}", location=location, objects=[text])


#: What a behaviour discriminator expects, by the function that reads the tag.
_BEHAVIOUR_TAGS = {"_step_key()": ("step", step_kinds), "_trigger_key()": ("trigger", lambda: TRIGGER_KEYS)}


def _behaviour_tag(data: Any, path: list[PathPart], location: str, error: Any) -> Evidence:
    """A behaviour step or trigger whose kind is unknown or missing: the kinds, and a rename that fixes a typo."""
    what, known = _BEHAVIOUR_TAGS[str(error["ctx"]["discriminator"])]
    kinds = list(known())
    item: Any = data
    for part in path:
        item = _child(item, part)
    keys = list(item) if isinstance(item, dict) else []
    relaxations = []
    fields = set(TRIGGER_FIELDS) if what == "trigger" else set()
    for key in keys:
        if key in kinds or key in fields:
            continue
        for near in difflib.get_close_matches(str(key), kinds, n=2, cutoff=0.6):
            relaxations.append(Relaxation(description=f"use {what} {near!r} for {key!r}", patch=[
                {"op": "remove", "path": [*path, key]}, {"op": "add", "path": [*path, near], "value": item[key]}]))
    if what == "step" and len(keys) != 1:
        message = f"a step is a mapping with exactly one key, its kind (one of {', '.join(kinds)}); got {keys}"
    else:
        unknown = ", ".join(repr(k) for k in keys if k not in kinds and k not in fields) or "none"
        message = f"unknown {what} kind {unknown}; a {what} has one of: {', '.join(kinds)}"
    return Evidence(code="E_PLAN_UNKNOWN_FIELD", message=message, location=location, relaxations=relaxations)


def _bound(data: dict[str, Any], source: str | None) -> None:
    """The size limits (operations, resources, shape) and admissible numbers, before pydantic sees the plan:
    validating 60 000 operations or a ``5e-324`` step is work (or an overflow) the answer does not need."""
    where = f"{source}: " if source else ""
    try:
        ops = data.get("operations")
        if isinstance(ops, list):
            check_count("operations", len(ops), f"{where}operations", "the number of operations")
        resources = data.get("resources")
        if isinstance(resources, dict):
            total = sum(len(v) for v in resources.values() if isinstance(v, list | dict))
            check_count("resources", total, f"{where}resources", "the number of resources")
        check_document(data, source)
    except LimitExceeded as exc:
        raise PlanError([exc.evidence()]) from None
    except NumberOutOfRange as exc:
        raise PlanError(exc.evidence) from None


def parse_plan(data: Any, source: str | None = None) -> Plan:
    """Validate plan data; raise :class:`PlanError` with every problem located (``source: path``)."""
    if not isinstance(data, dict):
        where = source or "plan"
        raise PlanError(
            [Evidence(code="E_PLAN_FIELD", message="a plan is a mapping with 'operations'", location=where)]
        )
    _bound(data, source)
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
