"""Every schema-drawn plan that validates also verifies clean, and the parse accepts what the schema allows.

For each operation and plan-level block, hypothesis-jsonschema draws documents from the JSON Schema the agent
is given (``spec.model.model_json_schema()``) and puts each into a valid base plan that uses it (the field-effect
test's bases: suite references and examples), replacing the base's own. The parse must accept the document
(the schema is the whole contract of its shape), and when the obligations accept the plan, ``run_plan`` must
pass: lowered, and the independent verifier finds nothing. Derandomized, ``EXAMPLES`` documents per operation.

A recursive schema (the behaviour block: steps hold steps) is drawn unrolled (:func:`unrolled`):
hypothesis-jsonschema cannot resolve recursive references, and every document of the unrolled schema is one
of the original's, so the claim tested is the same on the documents drawn.
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
#: How many times a recursive definition may contain itself in a drawn document.
DEPTH = 1


def _reaches(node: Any, name: str, defs: dict[str, Any], seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` refers to definition ``name``, directly or through other definitions."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = ref.rsplit("/", 1)[-1]
            return target == name or (target not in seen and _reaches(defs[target], name, defs, seen | {target}))
        return any(_reaches(v, name, defs, seen) for v in node.values())
    if isinstance(node, list):
        return any(_reaches(v, name, defs, seen) for v in node)
    return False


def unrolled(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``$defs`` inlined, a recursive definition nested at most ``DEPTH`` times in itself;
    below that, a union keeps only its alternatives that do not recur (a print, a set…), and an object that
    can only recur is impossible there (``not: {}``), so lists of it stay empty. Discriminator mappings, which
    name the inlined definitions, are dropped: the alternatives' own ``const`` tags still tell them apart."""
    defs = schema.get("$defs", {})

    def inline(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(v, stack) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if stack.count(name) <= DEPTH:
                return inline(defs[name], (*stack, name))
            union = next((key for key in ("anyOf", "oneOf") if key in defs[name]), None)
            keep = [alt for alt in defs[name].get(union, []) if not _reaches(alt, name, defs)] if union else []
            return inline({union: keep}, (*stack, name)) if keep else {"not": {}}
        return {k: inline(v, stack) for k, v in node.items() if k not in ("$defs", "discriminator")}

    return inline(schema, ())
OWNERS = [(s.kind, s.model) for s in specs()] + [(s.name, s.model) for s in sections()]


def _base(owner: str) -> tuple[dict[str, Any], list[str | int]] | None:
    for base in _bases().get(owner, []):
        for at in _where(base, owner):
            return base.data, at
    return None


@pytest.mark.parametrize(("owner", "model"), OWNERS, ids=[o for o, _ in OWNERS])
def test_a_schema_drawn_operation_parses_and_verifies_clean_when_it_validates(owner: str, model: Any) -> None:
    found = _base(owner)
    if found is None:
        pytest.skip(f"no valid base plan uses {owner}")  # the field-effect test asserts every owner has one
    data, at = found
    schema = unrolled(model.model_json_schema())

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
