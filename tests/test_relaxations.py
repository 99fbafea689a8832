"""A relaxation is a promise: every relaxation of every seeded violation validates once applied.

The seeded violations are those of ``test_obligations_seeded.py`` and the fact-driven ones of
``test_obligations_facts.py``. Each plan goes through ``pipeline.run_plan`` — the same validation the
CLI runs: parse, obligations, the framework's lowering, the independent source verifier — for the
framework the plan targets. Then *each* relaxation offered (not only the first) is applied with
``contract.apply_patch`` and the patched plan is judged twice: by every obligation (it must not
introduce a violation the plan did not have, and the violation it answers must be gone — 100 %), and
by ``run_plan`` again (a plan whose only violation that was must then pass outright: the pipeline hands
its lowering to the obligations as ``accepts``, so a relaxation a lowering would refuse is not offered).
Every seeded violation must offer at least one relaxation.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
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

from rac_fw.contract import Evidence, PatchError, Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lowers
from rac_fw.domains.firmware.obligations import check, violations
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import PlanError, parse_plan
from rac_fw.domains.firmware.plan.registry import section_values


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


def _new(after: list[Evidence], others: Counter[tuple[str, frozenset[str]]]) -> list[Evidence]:
    """Evidence ``after`` holds beyond the plan's other violations."""
    left = Counter(_key(e) for e in after)
    return [e for e in after if left[_key(e)] > others[_key(e)]]


@dataclass
class Outcome:
    violations: int = 0
    applied: int = 0
    by_rules: list[str] = field(default_factory=list)
    """Promises the obligations break (or violations offering none)."""
    by_cli: list[str] = field(default_factory=list)
    """Promises ``run_plan`` (obligations, lowering, verifier) breaks."""
    broken: list[str] = field(default_factory=list)
    """Relaxations with an empty patch, a patch that does not apply, or a result that does not parse or is empty."""


@cache
def _outcome(index: int) -> Outcome:
    """Apply every relaxation of ``SEEDED[index]`` and re-validate (cached: tests share one run)."""
    case = SEEDED[index]
    target = load_target(case.plan["target"])
    before = run_plan(case.plan)
    assert before.status is Status.INVALID and before.evidence, f"{case.id}: the seeded plan validated"
    outcome = Outcome(violations=len(before.evidence))
    for i, evidence in enumerate(before.evidence):
        if not evidence.relaxations:
            outcome.by_rules.append(f"{evidence.code} at {evidence.location} offers no relaxation")
        others = Counter(_key(e) for j, e in enumerate(before.evidence) if j != i)
        for relaxation in evidence.relaxations:
            outcome.applied += 1
            what = f"{evidence.code} -> {relaxation.description!r}"
            if not relaxation.patch:
                outcome.broken.append(f"{what}: empty patch")
                continue
            try:
                patched = apply_patch(case.plan, relaxation.patch)
                parsed = parse_plan(patched)
            except (PatchError, PlanError) as exc:
                outcome.broken.append(f"{what}: {exc}")
                continue
            if not parsed.operations and not section_values(parsed):
                outcome.broken.append(f"{what}: leaves an empty plan")
                continue
            judged_on = load_target(parsed.target) if parsed.target else target  # a relaxation may move boards
            if broken := _new(check(parsed, judged_on), others):
                outcome.by_rules.append(f"{what}: {[(e.code, e.message) for e in broken]}")
                continue
            after = run_plan(patched)
            broken = _new(after.evidence, others)
            if broken or (not after.evidence and after.status is not Status.PASS):
                why = "; ".join(f"{e.code} {e.location}: {e.message}" for e in broken) or after.status.value
                outcome.by_cli.append(f"{what}: {why}")
    return outcome


IDS = [c.id for c in SEEDED]


@pytest.mark.parametrize("index", range(len(SEEDED)), ids=IDS)
def test_every_relaxation_of_a_seeded_violation_satisfies_every_obligation(index: int) -> None:
    outcome = _outcome(index)
    assert outcome.applied >= outcome.violations
    assert outcome.by_rules == []


@pytest.mark.parametrize("index", range(len(SEEDED)), ids=IDS)
def test_every_relaxation_of_a_seeded_violation_validates_through_run_plan(index: int) -> None:
    assert _outcome(index).by_cli == []


@pytest.mark.parametrize("index", range(len(SEEDED)), ids=IDS)
def test_no_relaxation_has_an_empty_patch_or_leaves_an_empty_or_unparsable_plan(index: int) -> None:
    """The property behind the promise: every relaxation of every seeded violation applies cleanly to the
    document its author wrote (``wifi: true`` included) and leaves a plan that parses and does something."""
    assert _outcome(index).broken == []


def test_relaxation_count_over_the_seeded_suite(capsys: pytest.CaptureFixture[str]) -> None:
    """The whole suite at once, with the count a closing note quotes (printed with ``-s``)."""
    outcomes = [_outcome(i) for i in range(len(SEEDED))]
    violations = sum(o.violations for o in outcomes)
    applied = sum(o.applied for o in outcomes)
    by_rules = sum(len(o.by_rules) for o in outcomes)
    by_cli = sum(len(o.by_cli) for o in outcomes)
    broken = sum(len(o.broken) for o in outcomes)
    gaps = {c.id for c, o in zip(SEEDED, outcomes, strict=True) if o.by_cli}
    with capsys.disabled():
        print(
            f"\nrelaxations: {len(SEEDED)} seeded plans, {violations} violations, {applied} relaxations applied; "
            f"{applied - by_rules} satisfy every obligation, {applied - by_rules - by_cli} pass run_plan "
            f"({by_cli} refused by a lowering, in {len(gaps)} plans); {broken} do not apply or empty the plan"
        )
    assert len(SEEDED) > len(CASES) and applied >= violations and by_rules == 0 and broken == 0
    assert gaps == set()


def test_an_acceptor_withholds_what_it_refuses() -> None:
    """The rules propose SRAM4 for a BDMA buffer (the only RAM BDMA reaches), but the HAL lowering
    does not receive LPUART1 by BDMA. Given the lowering as ``accepts``, ``check`` withholds it and
    every relaxation it still offers passes ``run_plan``."""
    case = next(c for c in CASES if c.id == "dma-unreachable-bdma")
    data = {"target": case.target, **case.plan}
    plan, target = parse_plan(data), load_target(case.target)
    proposed = next(e for e in violations(plan, target, "hal") if e.code == "E_DMA_UNREACHABLE").relaxations
    offered = next(e for e in check(plan, target, "hal", lowers) if e.code == "E_DMA_UNREACHABLE").relaxations
    to_sram4 = next(r for r in proposed if r.patch[0]["value"] == "SRAM4")
    assert to_sram4 not in offered and offered
    assert run_plan(apply_patch(data, to_sram4.patch)).status is Status.INVALID
    assert all(run_plan(apply_patch(data, r.patch)).status is Status.PASS for r in offered)
