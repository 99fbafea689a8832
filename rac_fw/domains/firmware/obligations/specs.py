"""Obligations declared by the op specs and plan-level block specs themselves.

An operation's own rules (``OpSpec.checks``) run once per use of it; a plan-level block the framework
cannot realize is ``E_TARGET_UNSUPPORTED`` with the frameworks that can and dropping the block as
relaxations, and a block the framework realizes runs its ``SectionSpec.checks``. Shared concerns stay
in their own modules; nothing here knows an operation or block by name.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import relax, remove, replace, violation
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.registry import section_values, sections, spec, specs
from rac_fw.domains.firmware.plan.spec import OpCheck

CODE = "E_TARGET_UNSUPPORTED"
Unit = tuple[Hashable, Callable[[Plan, Target, str], list[Evidence]]]


def codes() -> tuple[str, ...]:
    """Every evidence code the specs declare (the op and block modules' own obligations)."""
    found = [c for s in specs() for c in s.codes] + [c for s in sections() for c in s.codes]
    return tuple(dict.fromkeys(found))


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Run every operation's and every set block's own obligations."""
    found: list[Evidence] = []
    for index, op in enumerate(plan.operations):
        for rule in spec(op.op).checks:
            found.extend(rule(plan, target, framework, index, op))
    return found + check_sections(plan, target, framework)


def plan_units() -> list[Unit]:
    """The blocks' checks as one unit (``obligations.incremental``)."""
    return [(("sections",), check_sections)]


def operation_units(index: int, op: Operation) -> list[Unit]:
    """:func:`check`'s part for the operation at ``index``: one unit per rule of its spec (the operation it
    judges is the one at that position of the plan it is given)."""
    return [(("spec", index, op.op, n), partial(_at, rule, index)) for n, rule in enumerate(spec(op.op).checks)]


def _at(rule: OpCheck, index: int, plan: Plan, target: Target, framework: str) -> list[Evidence]:
    return rule(plan, target, framework, index, plan.operations[index])


def check_sections(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """E_TARGET_UNSUPPORTED for a block the framework cannot realize, else the block's own checks."""
    found: list[Evidence] = []
    for section, value in section_values(plan):
        if not section.realizes(framework, target):
            others = [f for f in target.frameworks if f != framework and section.realizes(f, target)]
            options = [relax(f"use framework {f}", replace(["framework"], f)) for f in others]
            options.append(relax(f"drop the {section.name} block", remove([section.name])))
            found.append(
                violation(
                    CODE,
                    f"the {section.name} block cannot be realized by {framework} on {target.id}"
                    + (f" (realized by: {', '.join(others)})" if others else "")
                    + (f": {section.why_not(target)}" if section.why_not is not None else ""),
                    [section.name],
                    [section.name, target.id, framework],
                    relaxations=options,
                )
            )
            continue
        for block_rule in section.checks:
            found.extend(block_rule(plan, target, framework, value))
    return found
