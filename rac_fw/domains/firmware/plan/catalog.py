"""What an agent is shown of the plan language: a compact index, and one schema per operation on demand.

The full plan JSON Schema grows with every operation (14 k o200k tokens for 24), which is too much to
carry in every tool definition. The *index* names each operation with its one-line purpose and where
it is realized (frameworks, and the targets when not all of a framework's targets), in a few tokens per
operation; ``op_schema(kind)`` gives that operation's full schema with its support row per target, and
``op_schema("resources")`` the resource declarations. ``benchmarks/bench_schema.py`` prints the sizes.
"""

from __future__ import annotations

from typing import Any

from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.plan.matrix import all_frameworks, frameworks_for
from rac_fw.domains.firmware.plan.registry import spec, specs
from rac_fw.domains.firmware.plan.resources import Resources
from rac_fw.schemas import inline_refs

#: The part name that ``op_schema`` answers with the resource declarations instead of an operation.
RESOURCES = "resources"
#: Longest purpose line in the index (the model's docstring says the rest).
PURPOSE_CHARS = 60
#: How the index spells where an operation is realized.
WHERE_LEGEND = "[fw]: on all its targets; [fw:a,b]: only on a, b; [fw-a]: on all but a"


class UnknownOperation(LookupError):
    """``op_schema`` for a name that is neither an operation kind nor ``resources``."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"no operation {name!r}; known: {', '.join(s.kind for s in specs())}, {RESOURCES}")


def _targets() -> list[Target]:
    return [load_target(t) for t in target_ids()]


def _purpose(sentence: str) -> str:
    if len(sentence) <= PURPOSE_CHARS:
        return sentence
    return sentence[: PURPOSE_CHARS - 3].rsplit(" ", 1)[0].rstrip(",;:(") + "..."


def _where(kind: str, targets: list[Target]) -> str:
    """Where ``kind`` is realized, as short as the index legend allows (see :data:`WHERE_LEGEND`)."""
    parts: list[str] = []
    for framework in all_frameworks():
        having = [t.id for t in targets if framework in t.frameworks]
        realizing = [t.id for t in targets if framework in frameworks_for(kind, t)]
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


def index() -> dict[str, Any]:
    """The schema index: the plan's envelope, the frameworks per target, and one line per operation."""
    targets = _targets()
    operations = {}
    for s in specs():
        where = _where(s.kind, targets)
        if where != "nowhere":
            operations[s.kind] = f"{_purpose(s.summary)} [{where}]"
    return {
        "plan": {
            "target": "target id (from the task)",
            "framework": "zephyr|espidf|hal|baremetal; default: the target's first",
            "resources": "buffers, pins, devices, threads: op_schema('resources')",
            "operations": "1-64 items {op: KIND, name?: id, ...}: op_schema(KIND) gives the fields",
            "heap_bytes": "int",
            "stack_bytes": "int",
        },  # fmt: skip
        "where": WHERE_LEGEND,
        "targets": {t.id: list(t.frameworks) for t in targets},
        "operations": operations,
    }


def op_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one operation (or of ``resources``), with where it is realized per target."""
    if name == RESOURCES:
        return inline_refs(Resources.model_json_schema())
    try:
        op = spec(name)
    except KeyError:
        raise UnknownOperation(name) from None
    schema = inline_refs(op.model.model_json_schema())
    schema["x-realized"] = {t.id: frameworks_for(name, t) for t in _targets()}
    return schema


def envelope_schema() -> dict[str, Any]:
    """The plan schema a tool definition carries: every top-level field, ``resources`` as an object and
    each operation as ``{op: KIND, …}`` — the rest is validated on submission and served by ``op_schema``."""
    from rac_fw.domains.firmware.plan.model import Plan  # the plan imports the registry: import late

    schema = inline_refs(Plan.model_json_schema())
    properties = schema.get("properties", {})
    properties["resources"] = {
        "type": "object",
        "description": "buffers, pins, devices, threads; schema: op_schema('resources')",
    }
    properties["operations"] = {
        "type": "array",
        "minItems": 1,
        "maxItems": 64,
        "description": "Operations; each one's fields: op_schema(KIND) (the index lists the kinds)",
        "items": {
            "type": "object",
            "required": ["op"],
            "properties": {"op": {"enum": [s.kind for s in specs()]}},
        },
    }
    for field in properties.values():
        field.pop("title", None)
    schema.pop("title", None)
    return schema
