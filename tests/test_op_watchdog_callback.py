"""``watchdog`` with ``on_expiry: log``: the expiry callback (``wdt_timeout_cfg.callback``) is installed
only where the chip pack says Zephyr's driver runs it (nRF WDT: yes; STM32 IWDG: -ENOTSUP) and only by
the Zephyr realization; elsewhere E_WATCHDOG_CALLBACK, whose relaxation (drop the field) validates."""

from __future__ import annotations

from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan

WDT = {"op": "watchdog", "name": "wdt", "timeout_ms": 2000, "feed_interval_ms": 500, "on_expiry": "log"}


def _plan(target: str, framework: str, **extra: Any) -> dict[str, Any]:
    return {"target": target, "framework": framework, "operations": [{**WDT, **extra}]}


SEEDED = [
    ("stm32f407-iwdg", _plan("stm32f407", "zephyr"), {"wdt", "IWDG"}),
    ("stm32h743-iwdg1", _plan("stm32h743", "zephyr"), {"wdt", "IWDG1"}),
    ("nrf52840-baremetal", _plan("nrf52840", "baremetal"), {"wdt", "WDT"}),
    ("esp32s3-espidf", _plan("esp32s3", "espidf"), {"wdt", "TASK_WDT"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_callback_where_the_driver_runs_none_is_refused_and_dropping_it_validates(
    case: str, plan: dict[str, Any], objects: set[str]
) -> None:
    evidence, broken = seeded(plan, "E_WATCHDOG_CALLBACK")
    assert objects <= set(evidence.objects), evidence.objects
    assert [r.patch for r in evidence.relaxations] == [[{"op": "remove", "path": ["operations", 0, "on_expiry"]}]]
    assert broken == []


def test_chip_facts_state_the_driver_callback() -> None:
    assert load_target("nrf52840").watchdogs["WDT"].expiry_callback is True
    assert load_target("stm32f407").watchdogs["IWDG"].expiry_callback is False
    assert load_target("stm32h743").watchdogs["IWDG1"].expiry_callback is False


def test_nrf_zephyr_installs_the_callback_that_logs_expiry() -> None:
    plan = _plan("nrf52840", "zephyr")
    assert run_plan(plan).status.value != "invalid"
    main = lower(parse_plan(plan), load_target("nrf52840"), "zephyr").files["src/main.c"]
    assert "static void app_wdt_expiring(const struct device *dev, int channel_id)" in main
    assert 'printk("rac: %s expiring\\n", "wdt");' in main
    assert ".callback = app_wdt_expiring," in main


def test_without_on_expiry_no_callback_is_installed() -> None:
    plan = {"target": "nrf52840", "framework": "zephyr", "operations": [{**WDT, "on_expiry": None}]}
    main = lower(parse_plan(plan), load_target("nrf52840"), "zephyr").files["src/main.c"]
    assert ".callback = NULL," in main and "expiring" not in main
