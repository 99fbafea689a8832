"""A relaxation is a promise: every relaxation of every seeded violation validates once applied.

The seeded violations are those of ``test_obligations_seeded.py`` and the fact-driven ones of
``test_obligations_facts.py``. Each plan goes through ``pipeline.run_plan`` — the same validation the
CLI runs: parse, obligations, the framework's lowering, the independent source verifier — for the
framework the plan targets. Then *each* relaxation offered (not only the first) is applied with
``contract.apply_patch`` and the patched plan goes through ``run_plan`` again. It must not introduce a
violation the plan did not have, and the violation it answers must be gone; a plan whose only
violation that was must then pass outright. Every seeded violation must offer at least one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from test_obligations_facts import (
    BUS_CLOCK_CASES,
    F407_HEAP_TOO_BIG,
    KERNEL_TIMER_CASES,
    ZEPHYR_ADC_SCAN_DMA,
    bus_plan,
    kernel_timer_plan,
)
from test_obligations_seeded import CASES

from rac_fw.contract import Evidence, Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.obligations import check, violations
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan


@dataclass(frozen=True)
class Seeded:
    id: str
    plan: dict[str, Any]
    """A complete plan document (target and, where the case needs one, framework)."""


def _seeded() -> list[Seeded]:
    found = [Seeded(c.id, {"target": c.target, **c.plan}) for c in CASES]
    found += [
        Seeded(f"kernel-tick-{t}-{us}us", {"target": t, "framework": "zephyr", **kernel_timer_plan(us)})
        for t, us, ok in KERNEL_TIMER_CASES
        if not ok
    ]
    found += [
        Seeded(f"bus-clock-{t}-{fw}-{ctrl}-{hz}", {"target": t, "framework": fw, **bus_plan(t, bus, ctrl, hz)})
        for t, fw, bus, ctrl, hz, relaxed in BUS_CLOCK_CASES
        if relaxed is not None
    ]
    found.append(Seeded("ram-budget-zephyr-pool", {"target": "stm32f407", "framework": "zephyr", **F407_HEAP_TOO_BIG}))
    found.append(Seeded("adc-scan-dma-zephyr", ZEPHYR_ADC_SCAN_DMA))
    return found


SEEDED = _seeded()


def _key(evidence: Evidence) -> tuple[str, frozenset[str]]:
    return evidence.code, frozenset(evidence.objects)


@cache
def _broken_promises(index: int) -> tuple[int, int, list[str]]:
    """For ``SEEDED[index]``: (violations, relaxations applied, the broken promises, described).
    Cached: the per-case test and the suite count share one run."""
    case = SEEDED[index]
    before = run_plan(case.plan)
    assert before.status is Status.INVALID and before.evidence, f"{case.id}: the seeded plan validated"
    broken: list[str] = []
    applied = 0
    for i, evidence in enumerate(before.evidence):
        if not evidence.relaxations:
            broken.append(f"{evidence.code} at {evidence.location} offers no relaxation")
        others = Counter(_key(e) for j, e in enumerate(before.evidence) if j != i)
        for relaxation in evidence.relaxations:
            applied += 1
            after = run_plan(apply_patch(case.plan, relaxation.patch))
            left = Counter(_key(e) for e in after.evidence)
            new = [e for e in after.evidence if left[_key(e)] > others[_key(e)]]
            if new or (not after.evidence and after.status is not Status.PASS):
                why = "; ".join(f"{e.code} {e.location}: {e.message}" for e in new) or after.status.value
                broken.append(f"{evidence.code} -> {relaxation.description!r}: {why}")
    return len(before.evidence), applied, broken


@pytest.mark.parametrize("index", range(len(SEEDED)), ids=[c.id for c in SEEDED])
def test_every_relaxation_of_a_seeded_violation_validates(index: int) -> None:
    violations, applied, broken = _broken_promises(index)
    assert applied >= violations
    assert broken == []


def test_relaxation_count_over_the_seeded_suite(capsys: pytest.CaptureFixture[str]) -> None:
    """The whole suite at once, with the count a closing note quotes (printed with ``-s``)."""
    totals = [_broken_promises(i) for i in range(len(SEEDED))]
    violations = sum(t[0] for t in totals)
    applied = sum(t[1] for t in totals)
    broken = [b for t in totals for b in t[2]]
    with capsys.disabled():
        print(
            f"\nrelaxations: {len(SEEDED)} seeded plans, {violations} violations, {applied} relaxations applied, "
            f"{len(broken)} broken promises"
        )
    assert len(SEEDED) > len(CASES) and applied >= violations and broken == []


def test_a_proposal_the_lowering_refuses_is_not_offered() -> None:
    """The rules propose SRAM4 for a BDMA buffer (the only RAM BDMA reaches), but no lowering receives
    LPUART1 by BDMA: ``check`` does not offer it, the raw proposal indeed does not validate."""
    case = next(c for c in CASES if c.id == "dma-unreachable-bdma")
    data = {"target": case.target, **case.plan}
    plan, target = parse_plan(data), load_target(case.target)
    proposed = next(e for e in violations(plan, target, "hal") if e.code == "E_DMA_UNREACHABLE").relaxations
    offered = next(e for e in check(plan, target, "hal") if e.code == "E_DMA_UNREACHABLE").relaxations
    to_sram4 = next(r for r in proposed if r.patch[0]["value"] == "SRAM4")
    assert to_sram4 not in offered and offered
    assert run_plan(apply_patch(data, to_sram4.patch)).status is Status.INVALID
    assert all(run_plan(apply_patch(data, r.patch)).status is Status.PASS for r in offered)
