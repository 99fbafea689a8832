"""What an agent is shown of the behaviour language: an index entry, and one schema per step on demand.

The language is recursive (an ``if`` holds steps), so its JSON Schema is served in parts like the
operations: ``op_schema('behaviour')`` gives the block with every nested step list reduced to "a step
``{KIND: …}``", ``op_schema('step:KIND')`` one step's fields, ``op_schema('expr')`` the expression language
(operators, functions, units). The index lists the trigger forms and one purpose line per step.
"""

from __future__ import annotations

from typing import Any

from rac_fw.domains.firmware.plan.behaviour.functions import FUNCTIONS
from rac_fw.domains.firmware.plan.behaviour.model import Behaviour
from rac_fw.domains.firmware.plan.behaviour.spec import step_kinds, step_specs
from rac_fw.domains.firmware.plan.behaviour.types import TYPE_NAMES
from rac_fw.domains.firmware.plan.behaviour.units import SYMBOLS
from rac_fw.schemas import inline_refs, purpose

STEP_PREFIX = "step:"
EXPR = "expr"

_STEP_MODELS = {s.model.__name__: s.kind for s in step_specs()}
_STEP_STUB = {
    "type": "object", "minProperties": 1, "maxProperties": 1,
    "description": "a step {KIND: …}, KIND one of " + ", ".join(step_kinds()) + ": op_schema('step:KIND')",
}  # fmt: skip


def _stub(name: str) -> dict[str, Any] | None:
    return _STEP_STUB if name in _STEP_MODELS else None


def _compact(node: Any) -> Any:
    """The schema with a union of step stubs collapsed into one stub, and pydantic's titles dropped."""
    if isinstance(node, list):
        return [_compact(v) for v in node]
    if not isinstance(node, dict):
        return node
    for key in ("oneOf", "anyOf"):
        options = node.get(key)
        if isinstance(options, list) and options and all(o == _STEP_STUB for o in options):
            return _STEP_STUB
    return {k: _compact(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}


def parts() -> list[str]:
    """The part names this catalog answers besides the block itself."""
    return [*(STEP_PREFIX + k for k in step_kinds()), EXPR]


def index_entry() -> dict[str, Any]:
    """The behaviour's lines of the schema index: trigger forms, steps with their purpose, where the rest is."""
    return {
        "triggers": "at: boot | every: 100ms | event: OP.EVENT | when: COND; each with do: [steps]",
        "steps": {s.kind: purpose(s.summary) for s in step_specs()},
        "more": "op_schema('behaviour'), op_schema('step:KIND'), op_schema('expr')",
    }


def expression_schema() -> dict[str, Any]:
    """The expression language an agent writes in conditions and values."""
    return {
        "type": "string",
        "description": "An expression: names (variables, loop indices, OP.OUTPUT, state), numbers with an "
        "optional unit (500ms, 1.5V, 20C, 0x1F), + - * / % & | ^ ~ << >>, == != < <= > >=, and or not, "
        "parentheses, bytes[i]. Units of one dimension are scaled (1.5V meets mV); integers wrap at their "
        "width; / and % by zero give 0.",
        "x-functions": {f.name: f.doc for f in FUNCTIONS.values()},
        "x-units": list(SYMBOLS),
        "x-types": list(TYPE_NAMES),
    }


def schema(name: str) -> dict[str, Any] | None:
    """The schema of ``behaviour``, ``step:KIND`` or ``expr`` (None for another name)."""
    if name == "behaviour":
        return _compact(inline_refs(Behaviour.model_json_schema(), _stub))
    if name == EXPR:
        return expression_schema()
    if name.startswith(STEP_PREFIX):
        kind = name.removeprefix(STEP_PREFIX)
        found = next((s for s in step_specs() if s.kind == kind), None)
        if found is not None:
            full = found.model.model_json_schema()
            defs = full.get("$defs", {})
            root = defs.get(found.model.__name__, full) if "$ref" in full else full
            return _compact(inline_refs({**root, "$defs": defs}, _stub))
    return None
