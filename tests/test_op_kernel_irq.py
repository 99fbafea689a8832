"""``direct_irq``: direct and zero-latency interrupt handlers judged against the chip's NVIC facts.

Seeded violations (the line, its owner, the priority band, a zero-latency handler narrowing every other
interrupt's band by one level) name the objects and every relaxation validates once applied; the
Zephyr realization enables CONFIG_ZERO_LATENCY_IRQS exactly when a zero-latency handler exists, and a
zero-latency handler returns 0 without ISR_DIRECT_PM(), as include/zephyr/arch/arm/irq.h requires.
"""

from __future__ import annotations

from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.plan.matrix import frameworks_for
from rac_fw.resources import data_dir

ZLI = {"op": "direct_irq", "name": "fast", "irq": "SWI0_EGU0", "zero_latency": True}
PLAIN = {"op": "direct_irq", "name": "slow", "irq": "SWI1_EGU1", "priority": 3}
BUTTON = {"op": "gpio_input_irq", "name": "button", "button": "sw0", "edge": "falling"}
EXAMPLE = data_dir("examples") / "kernel_direct_irq.yaml"


def _plan(*ops: dict[str, Any], target: str = "nrf52840") -> dict[str, Any]:
    return {"target": target, "framework": "zephyr", "operations": list(ops)}


SEEDED = [
    ("zli-with-priority", _plan({**ZLI, "priority": 1}), "E_IRQ_PRIORITY", {"fast"}),
    ("direct-without-priority", _plan({**PLAIN, "priority": None}), "E_IRQ_PRIORITY", {"slow"}),
    ("direct-above-band", _plan({**PLAIN, "priority": 7}), "E_IRQ_PRIORITY", {"slow"}),
    ("zli-narrows-the-button", _plan(ZLI, {**BUTTON, "irq_priority": 6}), "E_IRQ_PRIORITY", {"button", "fast"}),
    ("zli-narrows-a-direct-irq", _plan(ZLI, {**PLAIN, "priority": 6}), "E_IRQ_PRIORITY", {"slow"}),
    ("zli-narrows-on-stm32", _plan({**ZLI, "irq": "EXTI0"}, {**PLAIN, "irq": "EXTI1", "priority": 14},
                                   target="stm32f407"), "E_IRQ_PRIORITY", {"slow"}),
    ("unknown-line", _plan({**PLAIN, "irq": "SWI9"}), "E_UNKNOWN_RESOURCE", {"slow", "SWI9"}),
    ("line-taken-twice", _plan(ZLI, {**PLAIN, "irq": "SWI0_EGU0"}), "E_IRQ_IN_USE", {"slow", "fast", "SWI0_EGU0"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_irq_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str]
) -> None:
    evidence, broken = seeded(plan, code)
    assert objects <= set(evidence.objects), evidence.objects
    assert broken == []


def test_the_narrowed_band_comes_from_the_chip_facts() -> None:
    nrf = load_target("nrf52840").nvic
    assert nrf is not None
    levels = nrf.kernel_levels["zephyr"]
    evidence, _ = seeded(_plan(ZLI, {**BUTTON, "irq_priority": 6}), "E_IRQ_PRIORITY")
    assert evidence.location == "operations[1].irq_priority"
    assert {(m.name, m.value) for m in evidence.magnitudes} == {
        ("priority", levels.max_irq_priority),
        ("highest", levels.max_irq_priority_zero_latency),
    }


def test_zephyr_connects_direct_handlers_and_enables_zero_latency_irqs() -> None:
    files = lower(load_plan(EXAMPLE), load_target("nrf52840"), "zephyr").files
    main, conf = files["src/main.c"], files["prj.conf"]
    assert "CONFIG_ZERO_LATENCY_IRQS=y" in conf.splitlines()
    assert "IRQ_DIRECT_CONNECT(20, 0, app_fast_path_isr, IRQ_ZERO_LATENCY);" in main
    assert "IRQ_DIRECT_CONNECT(21, 2, app_slow_path_isr, 0);" in main
    fast = main[main.index("ISR_DIRECT_DECLARE(app_fast_path_isr)") :]
    fast = fast[: fast.index("\n}\n")]
    assert "ISR_DIRECT_PM();" not in fast and "return 0;" in fast and "atomic_inc(&app_fast_path_value);" in fast
    slow = main[main.index("ISR_DIRECT_DECLARE(app_slow_path_isr)") :]
    assert "ISR_DIRECT_PM();" in slow[: slow.index("\n}\n")]
    assert "NVIC_SetPendingIRQ((IRQn_Type)20);" in main
    plain = lower(parse_plan(_plan(PLAIN)), load_target("nrf52840"), "zephyr").files["prj.conf"]
    assert "ZERO_LATENCY" not in plain


def test_direct_irqs_need_an_nvic_with_kernel_levels() -> None:
    assert frameworks_for("direct_irq", load_target("nrf52840")) == ["zephyr"]
    assert frameworks_for("direct_irq", load_target("native_sim")) == []
    assert frameworks_for("direct_irq", load_target("esp32s3")) == []
