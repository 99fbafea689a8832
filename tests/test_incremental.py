"""Judging a relaxation by difference finds exactly what a full re-validation finds.

``obligations.incremental`` re-runs only the obligations whose recorded reads a candidate's patch meets,
and builds the candidate with structural sharing. Both shortcuts are checked here against the reference
— ``contract.apply_patch`` + ``parse_plan`` + every obligation — for every relaxation every rule proposes
(before ``promise`` filters them) on every seeded violation and on many-operation plans, so a read a view
missed or a write ``views.writes`` did not state shows up as a difference.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from test_relaxations import SEEDED

from rac_fw.contract import PatchError, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.obligations import UNITS, resolve_framework, violations
from rac_fw.domains.firmware.obligations.incremental import Judge, candidate, key
from rac_fw.domains.firmware.obligations.promise import document
from rac_fw.domains.firmware.plan.derived import validation
from rac_fw.domains.firmware.plan.load import PlanError, parse_plan

PWM = {"op": "pwm_fixed", "output": "led0", "period_us": 1000, "duty_percent": 25}
CLOCK = {"op": "core_clock", "mhz": 1000}
MANY = [
    ("pwm-shared-led", {"target": "stm32f407", "operations": [dict(PWM, name=f"p{i}") for i in range(12)]}),
    ("clock-conflicts", {"target": "stm32f407", "operations": [dict(CLOCK) for _ in range(8)]}),
    ("clock-named", {"target": "stm32f407", "operations": [dict(CLOCK, name=f"c{i}") for i in range(8)]}),
    (
        "mixed",
        {
            "target": "stm32f407",
            "operations": [
                dict(CLOCK, name="cpu"),
                dict(PWM, name="dim"),
                {"op": "gpio_blink", "led": "led0", "period_ms": 100},
                dict(PWM, name="dim"),
                {"op": "uart_print", "message": "hi", "baud": 3_000_000},
                dict(CLOCK, mhz=121),
            ],
        },
    ),
]
CASES = [(c.id, c.plan) for c in SEEDED] + MANY


def _reference(data: dict[str, Any], patch: list[dict[str, Any]], target: Any, framework: str) -> Counter[Any] | None:
    try:
        patched = parse_plan(apply_patch(data, patch))
    except (PatchError, PlanError, TypeError):
        return None
    return Counter(key(e) for e in violations(patched, target, framework))


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0] for c in CASES])
def test_a_candidate_judged_by_difference_has_the_violations_a_full_run_finds(case: int) -> None:
    _, data = CASES[case]
    plan = parse_plan(data)
    target = load_target(plan.target or "")
    framework = resolve_framework(plan, target)
    compared = 0
    with validation():
        found = violations(plan, target, framework)
        judge = Judge(plan, target, framework, UNITS)
        assert judge.total() == Counter(key(e) for e in found)
        doc = document(plan)
        for evidence in found:
            for relaxation in evidence.relaxations:
                patched = candidate(plan, doc, relaxation.patch)
                reference = _reference(doc, relaxation.patch, target, framework)
                assert (patched is None) == (reference is None), relaxation.description
                if patched is None or patched.framework not in (None, plan.framework):
                    continue
                assert patched == parse_plan(apply_patch(doc, relaxation.patch)), relaxation.description
                delta = judge.delta(patched)
                after = judge.total()
                after.subtract(delta.gone)
                after.update(delta.new)
                assert +after == reference, f"{evidence.code} -> {relaxation.description}"
                assert delta.left == sum(reference.values())
                compared += 1
    assert compared or not any(e.relaxations for e in found)
