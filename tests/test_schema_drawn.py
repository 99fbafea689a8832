"""Every schema-drawn plan that validates also verifies clean, and the parse accepts what the schema allows.

For each operation and plan-level block, hypothesis-jsonschema draws documents from the JSON Schema the agent
is given (``spec.model.model_json_schema()``) and puts each into a valid base plan that uses it (the field-effect
test's bases: suite references and examples), replacing the base's own. The parse must accept the document
(the schema is the whole contract of its shape), and when the obligations accept the plan, ``run_plan`` must
pass: lowered, and the independent verifier finds nothing. Derandomized, ``EXAMPLES`` documents per operation.

A recursive schema (the behaviour block: steps hold steps) is not drawn: hypothesis-jsonschema inlines every
reference and cannot resolve a recursive one, and the behaviour schema unrolled even once is 13.7 MB, over two
minutes to canonicalise. Behaviour documents are judged by the seeded cases (test_behaviour_seeded), the 48
examples on three frameworks (test_behaviour_examples) and the free-text fuzz (test_escaping).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from test_field_effect import _bases, _where

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import PlanError, parse_plan
from rac_fw.domains.firmware.plan.registry import sections, specs

EXAMPLES = 4


def _recursive(schema: dict[str, Any]) -> bool:
    """Whether a definition of ``schema`` refers to itself, directly or through others."""
    defs = schema.get("$defs", {})

    def refs(node: Any) -> set[str]:
        if isinstance(node, dict):
            found = {node["$ref"].rsplit("/", 1)[-1]} if isinstance(node.get("$ref"), str) else set()
            return found.union(*(refs(v) for v in node.values()))
        if isinstance(node, list):
            return set().union(*(refs(v) for v in node))
        return set()

    def reaches(start: str, name: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            for nxt in refs(defs[todo.pop()]) - seen:
                if nxt == name:
                    return True
                seen.add(nxt)
                todo.append(nxt)
        return False

    return any(reaches(name, name) for name in defs)


OWNERS = [(o, m) for o, m in [(s.kind, s.model) for s in specs()] + [(s.name, s.model) for s in sections()]
          if not _recursive(m.model_json_schema())]


def _base(owner: str) -> tuple[dict[str, Any], list[str | int]] | None:
    for base in _bases().get(owner, []):
        for at in _where(base, owner):
            return base.data, at
    return None


@pytest.mark.parametrize(("owner", "model"), OWNERS, ids=[o for o, _ in OWNERS])
def test_a_schema_drawn_operation_parses_and_verifies_clean_when_it_validates(owner: str, model: Any) -> None:
    found = _base(owner)
    assert found is not None, f"no valid base plan uses {owner}"
    data, at = found
    schema = model.model_json_schema()

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(st.data())
    def judge(draw: st.DataObject) -> None:
        document = draw.draw(from_schema(schema))
        plan = apply_patch(copy.deepcopy(data), [{"op": "replace", "path": at, "value": document}])
        try:
            parse_plan(plan)
        except PlanError as exc:
            raise AssertionError(f"the schema allows {document!r}, the parse refuses it: {exc}") from None
        result = run_plan(plan)
        if result.status is Status.INVALID:
            return  # refused with evidence: the obligations' business (test_relaxations, test_field_effect)
        assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]

    judge()
