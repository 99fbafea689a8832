"""Zero false rejections: well-formed plans for all five targets pass every obligation.

The fixture plans under ``tests/plans/`` exercise every operation family on the targets and
frameworks that realize it; each must validate with no evidence, and the matrix must cover every
target and every operation kind at least once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.obligations import check, resolve_framework
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.plan.model import OPERATION_KINDS

PLANS = sorted((Path(__file__).parent / "plans").glob("*.yaml"))


@pytest.mark.parametrize("path", PLANS, ids=[p.stem for p in PLANS])
def test_valid_plan_has_no_evidence(path: Path) -> None:
    plan = load_plan(path)
    assert plan.target is not None
    evidence = check(plan, load_target(plan.target))
    assert evidence == [], [(e.code, e.location, e.message) for e in evidence]


@pytest.mark.parametrize("path", PLANS, ids=[p.stem for p in PLANS])
def test_valid_plan_lowers_and_verifies(path: Path) -> None:
    """A fixture the obligations accept is realizable too: the pipeline lowers and verifies it."""
    result = run_plan(path)
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]


def test_matrix_covers_every_target_and_most_operations() -> None:
    plans = [load_plan(p) for p in PLANS]
    assert {p.target for p in plans} == set(target_ids())
    used = {op.op for p in plans for op in p.operations}
    catalog = set(OPERATION_KINDS)
    # gpio_set is in nrf52840_zephyr; sensor_read in nrf52840_zephyr_dt_string (the escaping fuzzer's plan).
    assert catalog - used == set()


def test_same_operations_validate_on_every_target_with_its_default_framework() -> None:
    portable = {
        "operations": [
            {"op": "uart_print", "message": "portable"},
            {"op": "timer_periodic", "period_ms": 10},
            {"op": "gpio_blink", "led": "led", "period_ms": 500},
        ],
    }
    pins = {"esp32s3": "GPIO21", "native_sim": "GPIO5", "nrf52840": "P1.01", "nrf52840dongle": "P1.01",
            "stm32f407": "PE2", "stm32h743": "PE2"}
    for target_id in target_ids():
        data = {**portable, "resources": {"pins": [{"name": "led", "pin": pins[target_id]}]}}
        plan = parse_plan(data)
        target = load_target(target_id)
        assert resolve_framework(plan, target) == target.frameworks[0]
        assert check(plan, target) == [], target_id


def test_console_pins_declared_as_themselves_and_shared_analog_inputs_are_not_conflicts() -> None:
    data = {
        "resources": {"pins": [{"name": "vcp_tx", "pin": "PD8", "function": "USART3_TX"}]},
        "operations": [
            {"op": "uart_print", "message": "console"},
            {"op": "adc_read", "channel": {"pin": "PA0"}},
            {"op": "adc_periodic", "channel": {"pin": "PA0"}, "interval_ms": 10},
        ],
    }
    assert check(parse_plan(data), load_target("stm32h743")) == []
