"""Shared by the kernel/reaction tests: judge a seeded violation and every relaxation it offers.

The pattern of ``test_relaxations.py``: the seeded plan goes through ``pipeline.run_plan``; each
relaxation is applied with ``contract.apply_patch``; the patched plan must not introduce a violation
the plan did not have, the violation it answers must be gone, and a plan left with no violation must
pass ``run_plan`` outright.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rac_fw.contract import Evidence, Status, apply_patch
from rac_fw.domains.firmware.pipeline import run_plan


def _key(evidence: Evidence) -> tuple[str, frozenset[str]]:
    return evidence.code, frozenset(evidence.objects)


def seeded(plan: dict[str, Any], code: str) -> tuple[Evidence, list[str]]:
    """The evidence with ``code`` the seeded plan gets, and every broken relaxation promise (empty = all hold)."""
    before = run_plan(plan)
    assert before.status is Status.INVALID, f"the seeded plan validated: {before.status}"
    hits = [e for e in before.evidence if e.code == code]
    assert hits, [(e.code, e.message) for e in before.evidence]
    evidence = hits[0]
    assert evidence.relaxations, f"{code} offers no relaxation"
    others = Counter(_key(e) for e in before.evidence if e is not evidence)
    broken = []
    for relaxation in evidence.relaxations:
        after = run_plan(apply_patch(plan, relaxation.patch))
        left = Counter(_key(e) for e in after.evidence)
        new = [e for e in after.evidence if left[_key(e)] > others[_key(e)]]
        if new or (not after.evidence and after.status is not Status.PASS):
            why = "; ".join(f"{e.code}: {e.message}" for e in new) or after.status.value
            broken.append(f"{relaxation.description!r}: {why}")
    return evidence, broken
