"""A relaxation is a promise: only relaxations whose patched plan validates are offered.

Each obligation proposes relaxations from the facts it knows (free pins, reachable regions, nearest
admissible values), but a change that repairs one rule can break another (a free pin that is reserved
for the board, one of three buffers moved when all three overflow, a shorter source making a copy's
destination too short). Rather than every rule re-deriving every other rule, each proposal is
*tested* here, once: the patch is applied to the plan document, the result is parsed and every
obligation runs on it. A relaxation survives when the violation it answers is gone and nothing new
appeared (violations the plan had besides it may remain: each relaxation answers one violation).

Obligations never import a lowering (they ask the support matrix), so whatever still judges a plan
after them — a lowering that refuses part of a valid plan — is passed in as ``accepts`` by the caller
that runs both (the pipeline); a patched plan every rule accepts must then satisfy it too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from rac_fw.contract import Evidence, PatchError, Relaxation, apply_patch
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.plan.load import PlanError, parse_plan
from rac_fw.domains.firmware.plan.model import Plan

Checker = Callable[[Plan, Target, str], list[Evidence]]
Acceptor = Callable[[Plan, Target, str], bool]
"""Judges a plan every obligation accepts (the pipeline passes its lowering); None: rules only."""
Key = tuple[str, frozenset[str]]


def _key(evidence: Evidence) -> Key:
    """What identifies a violation across a patch: its code and the objects in conflict (locations
    shift when a patch removes an operation, so they are not part of it)."""
    return evidence.code, frozenset(evidence.objects)


def document(plan: Plan) -> dict[str, Any]:
    """The plan as the dict its author wrote (fields left at their default stay omitted), which is
    what relaxation patches are written against."""
    return plan.model_dump(mode="json", exclude_unset=True)


def validates(
    data: dict[str, Any],
    patch: list[dict[str, Any]],
    target: Target,
    framework: str,
    remaining: Sequence[Evidence],
    rules: Checker,
    accepts: Acceptor | None = None,
) -> bool:
    """Whether ``patch`` repairs the violation it answers without introducing one ``remaining`` (the
    plan's other violations) lacks; a plan left with no violation at all must also satisfy ``accepts``."""
    try:
        patched = parse_plan(apply_patch(data, patch))
    except (PatchError, PlanError):
        return False
    if patched.framework is not None and patched.framework != data.get("framework"):
        framework = patched.framework  # the relaxation switches framework: judge it under the new one
    allowed = Counter(_key(e) for e in remaining)
    after = rules(patched, target, framework)
    for evidence in after:
        key = _key(evidence)
        if allowed[key] <= 0:
            return False
        allowed[key] -= 1
    return bool(after) or accepts is None or accepts(patched, target, framework)


#: Most relaxations offered per violation: rules may propose more (every achievable baud rate, every
#: free pin of the right kind), the first that validate are kept.
MAX_OFFERED = 6


def kept(
    plan: Plan,
    target: Target,
    framework: str,
    found: list[Evidence],
    rules: Checker,
    accepts: Acceptor | None = None,
) -> list[Evidence]:
    """``found`` with only the relaxations that validate, at most ``MAX_OFFERED`` each, in the rules' order."""
    if not found:
        return found
    data = document(plan)
    result = []
    for i, evidence in enumerate(found):
        remaining = found[:i] + found[i + 1 :]
        relaxations: list[Relaxation] = []
        for relaxation in evidence.relaxations:
            if len(relaxations) == MAX_OFFERED:
                break
            if validates(data, relaxation.patch, target, framework, remaining, rules, accepts):
                relaxations.append(relaxation)
        if len(relaxations) != len(evidence.relaxations):
            evidence = evidence.model_copy(update={"relaxations": relaxations})
        result.append(evidence)
    return result
