"""What an agent is shown of the plan language: a compact index, and one schema per operation on demand.

The full plan JSON Schema grows with every operation (14 k o200k tokens for 24), which is too much to
carry in every tool definition. The *index* names each operation and plan-level block with its one-line
purpose, grouped by where it is realized (frameworks, and the targets when not all of a framework's
targets), in a few tokens per operation; ``op_schema(name)`` gives that operation's or block's full
schema with its support row per target, and ``op_schema("resources")`` the resource declarations.
``benchmarks/bench_schema.py`` prints the sizes.
"""

from __future__ import annotations

from typing import Any

from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.plan.behaviour import catalog as behaviour_catalog
from rac_fw.domains.firmware.plan.matrix import all_frameworks, frameworks_for
from rac_fw.domains.firmware.plan.registry import sections, spec, specs
from rac_fw.domains.firmware.plan.resources import Resources
from rac_fw.domains.firmware.plan.spec import SectionSpec
from rac_fw.schemas import first_sentence, inline_refs, purpose

#: The part name that ``op_schema`` answers with the resource declarations instead of an operation.
RESOURCES = "resources"
#: How the index spells where an operation is realized.
WHERE_LEGEND = ("operations and blocks are grouped by where they are realized: fw = on all its targets, "
                "fw:a,b = only on a, b, fw-a = on all but a")


class UnknownOperation(LookupError):
    """``op_schema`` for a name that is neither an operation kind nor ``resources``."""

    def __init__(self, name: str):
        self.name = name
        known = [*(s.kind for s in specs()), *(b.name for b in sections()), RESOURCES, *behaviour_catalog.parts()]
        super().__init__(f"no operation or plan block {name!r}; known: {', '.join(known)}")


def _targets() -> list[Target]:
    return [load_target(t) for t in target_ids()]


def _where(realized: dict[str, list[str]], targets: list[Target]) -> str:
    """Where a part is realized (target id → frameworks realizing it there), as short as the index
    legend allows (see :data:`WHERE_LEGEND`)."""
    parts: list[str] = []
    for framework in all_frameworks():
        having = [t.id for t in targets if framework in t.frameworks]
        realizing = [t.id for t in targets if framework in realized[t.id]]
        missing = [t for t in having if t not in realizing]
        if not realizing:
            continue
        if not missing:
            parts.append(framework)
        elif len(missing) < len(realizing):
            parts.append(f"{framework}-{','.join(missing)}")
        else:
            parts.append(f"{framework}:{','.join(realizing)}")
    return " ".join(parts) or "nowhere"


def _op_rows(kind: str, targets: list[Target]) -> dict[str, list[str]]:
    return {t.id: frameworks_for(kind, t) for t in targets}


def _block_rows(block: SectionSpec, targets: list[Target]) -> dict[str, list[str]]:
    return {t.id: [f for f in t.frameworks if block.realizes(f, t)] for t in targets}


#: What the index says of the plan's own fields (``index()["plan"]``; ``BLOCK`` stands for every block).
_PLAN_FIELDS = {
    "target": "target id (from the task)",
    "framework": "zephyr|espidf|hal|baremetal; default: the target's first",
    "resources": "buffers, pins, devices, threads: op_schema('resources')",
    "operations": "1-64 items {op: KIND, name?: id, ...}: op_schema(KIND) gives the fields",
    "heap_bytes": "int",
    "stack_bytes": "int",
    "BLOCK": "a plan-level block below: op_schema(BLOCK) gives its fields",
}
_INDEXED = frozenset(_PLAN_FIELDS) - {"BLOCK"}


def index() -> dict[str, Any]:
    """The schema index: the plan's envelope, the frameworks per target, one purpose line per operation
    (grouped by where the operations are realized: the group key costs its tokens once, not once per
    operation) and one line per plan-level block."""
    targets = _targets()
    operations: dict[str, dict[str, str]] = {}
    for s in specs():
        where = _where(_op_rows(s.kind, targets), targets)
        if where != "nowhere":
            operations.setdefault(where, {})[s.kind] = purpose(s.summary)
    blocks: dict[str, dict[str, str]] = {}
    for block in sections():
        where = _where(_block_rows(block, targets), targets)
        if where != "nowhere":
            blocks.setdefault(where, {})[block.name] = purpose(first_sentence(block.model.__doc__, block.name))
    return {
        "plan": _PLAN_FIELDS,
        "where": WHERE_LEGEND,
        "targets": {t.id: list(t.frameworks) for t in targets},
        "operations": operations,
        "blocks": blocks,
        "behaviour": behaviour_catalog.index_entry(),
    }


def op_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one operation, plan-level block or ``resources``, with where it is realized
    per target."""
    if name == RESOURCES:
        return inline_refs(Resources.model_json_schema())
    part = behaviour_catalog.schema(name)
    if part is not None and name != "behaviour":
        return part
    blocks = {b.name: b for b in sections()}
    if name in blocks:
        schema = part if part is not None else inline_refs(blocks[name].model.model_json_schema())
        schema["x-realized"] = _block_rows(blocks[name], _targets())
        return schema
    try:
        op = spec(name)
    except KeyError:
        raise UnknownOperation(name) from None
    schema = inline_refs(op.model.model_json_schema())
    schema["x-realized"] = _op_rows(name, _targets())
    schema.update(_behaviour_facets(op))
    return schema


def _behaviour_facets(op: Any) -> dict[str, Any]:
    """What a behaviour may use of an operation: its events, outputs (type, unit) and actions (parameters)."""
    facets: dict[str, Any] = {}
    if op.events:
        facets["x-events"] = list(op.events)
    if op.outputs:
        facets["x-outputs"] = {n: f"{o.type}{' ' + o.unit if o.unit else ''}: {o.doc}" for n, o in op.outputs.items()}
    if op.actions:
        facets["x-actions"] = {
            n: a.doc + "".join(f" {p}: {q.kind}{' ' + q.type if q.type else ''}" for p, q in a.params.items())
            for n, a in op.actions.items()
        }
    return facets


def envelope_schema() -> dict[str, Any]:
    """The plan schema a tool definition carries: every top-level field, ``resources`` and each plan-level
    block as an object, and each operation as ``{op: KIND, …}`` — the rest is validated on submission and
    served by ``op_schema`` (the index lists the kinds and blocks)."""
    from rac_fw.domains.firmware.plan.model import Plan  # the plan imports the registry: import late

    schema = inline_refs(Plan.model_json_schema())
    properties = schema.get("properties", {})
    properties["resources"] = {"type": "object",
                               "description": "buffers, pins, devices, threads: op_schema('resources')"}
    for block in sections():
        properties[block.name] = {"type": ["object", "null"], "description": f"plan block: op_schema({block.name!r})"}
    properties["operations"] = {
        "type": "array",
        "minItems": 1,
        "maxItems": 64,
        "description": "Operations {op: KIND, ...}; KIND from the index, fields: op_schema(KIND)",
        "items": {"type": "object", "required": ["op"], "properties": {"op": {"type": "string"}}},
    }
    for name, field in properties.items():
        field.pop("title", None)
        if name in _INDEXED:  # the index's "plan" entry says it (the tool carries both)
            field.pop("description", None)
    schema.pop("title", None)
    return schema
