"""Regression tests for issue 27's contract defects: fields that did nothing, checks the tool's own output
failed, refusals without a way forward. Each test fails on the code before the fix.

``SEEDED`` holds this file's new evidence codes as seeded violations (``test_obligations_seeded`` takes
them into its suite, so every code keeps a case and its relaxations are proven by ``test_relaxations``).
"""

from __future__ import annotations

import copy
from typing import Any

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.plan.model import Plan

THREAD = {"name": "worker", "priority": 5, "stack_bytes": 1024}
TICK = {"op": "timer_periodic", "name": "tick", "period_ms": 10}

#: (id, target, plan without target, code, objects): new codes as seeded violations.
SEEDED: list[tuple[str, str, dict[str, Any], str, list[str]]] = [
    (
        "handoff-semaphore-payload",
        "nrf52840",
        {
            "resources": {"threads": [THREAD]},
            "operations": [
                TICK,
                {"op": "isr_handoff", "source": "tick", "mechanism": "semaphore", "thread": "worker", "item_bytes": 8},
            ],
        },
        "E_HANDOFF_PAYLOAD",
        ["item_bytes"],
    ),
    (
        "one-op-unsupported-ble",
        "native_sim",
        {"operations": [{"op": "ble_advertise", "name": "adv", "device_name": "x"}]},
        "E_TARGET_UNSUPPORTED",
        ["ble_advertise"],
    ),
    (
        "wifi-shorthand-without-radio",
        "stm32f407",
        {"wifi": True, "operations": [{"op": "gpio_blink", "led": "led0", "period_ms": 500}]},
        "E_TARGET_UNSUPPORTED",
        ["wifi_station"],
    ),
    (
        "sleep-restart-without-reset",
        "nrf52840",
        {
            "operations": [
                {"op": "sleep", "state": "system_on_idle", "wake": ["rtc"], "after_ms": 2000, "resume": "restart"}
            ]
        },
        "E_POWER_RESUME",
        ["system_on_idle"],
    ),
    (
        "lifetime-without-period",
        "nrf52840",
        {"operations": [{"op": "settings_value", "key": "boots", "value_bytes": 4, "lifetime_years": 20}]},
        "E_FIELD_UNUSED",
        ["lifetime_years"],
    ),
    (
        "thread-unused",
        "nrf52840",
        {
            "resources": {"threads": [THREAD]},
            "operations": [{"op": "gpio_blink", "led": "led0", "period_ms": 500}],
        },
        "E_THREAD_UNUSED",
        ["worker"],
    ),
]


def _files(data: dict[str, Any], framework: str | None = None) -> dict[str, str]:
    plan = parse_plan(data)
    target = load_target(plan.target or "")
    return lower(plan, target, framework or plan.framework or target.frameworks[0]).files


def _passes(data: dict[str, Any]) -> bool:
    return run_plan(copy.deepcopy(data)).status is Status.PASS


def _every_relaxation_passes(data: dict[str, Any], code: str) -> list[str]:
    result = run_plan(copy.deepcopy(data))
    hit = [e for e in result.evidence if e.code == code]
    assert hit, [(e.code, e.message) for e in result.evidence]
    offered = [r for e in hit for r in e.relaxations]
    assert offered, f"{code} offers no way forward"
    for relaxation in offered:
        assert relaxation.patch, relaxation.description
        assert _passes(apply_patch(data, relaxation.patch)), relaxation.description
    return [r.description for r in offered]


# --- fields that did nothing ------------------------------------------------------------------------------
I2C = {
    "target": "stm32h743",
    "resources": {"devices": [{"name": "tmp", "bus": "i2c", "controller": "I2C1", "address": 0x48}]},
    "operations": [{"op": "i2c_transfer", "name": "t", "device": "tmp", "register_index": 0, "read_bytes": 2}],
}


def test_i2c_timeout_bounds_the_hal_transfer_and_is_refused_where_zephyr_cannot_bound_it() -> None:
    slow = copy.deepcopy(I2C)
    slow["operations"][0]["timeout_ms"] = 250
    hal = {**I2C, "framework": "hal"}
    assert _files({**slow, "framework": "hal"})["Core/Src/main.c"] != _files(hal)["Core/Src/main.c"]
    assert "250U" in _files({**slow, "framework": "hal"})["Core/Src/main.c"]
    offered = _every_relaxation_passes(slow, "E_TARGET_UNSUPPORTED")
    assert "drop timeout_ms" in offered and "use framework hal" in offered
    assert _passes(I2C)  # at its default nothing is promised: the Zephyr plan stays valid
    assert "k_msleep(5)" in _files(I2C)["src/main.c"]  # the pause between attempts is no longer the timeout


def test_ring_atomic_items_have_the_plans_item_bytes_on_zephyr() -> None:
    def ring(item_bytes: int) -> str:
        data = {
            "target": "nrf52840",
            "resources": {"threads": [THREAD]},
            "operations": [
                TICK,
                {"op": "isr_handoff", "source": "tick", "mechanism": "ring_atomic", "thread": "worker",
                 "item_bytes": item_bytes},
            ],
        }  # fmt: skip
        return _files(data)["src/main.c"]

    assert "_ring[9][16]" in ring(16) and "_ring[9][2]" in ring(2)


def test_a_semaphore_handoff_refuses_an_item_size() -> None:
    _, target, data, code, _ = SEEDED[0]
    offered = _every_relaxation_passes({"target": target, **data}, code)
    assert offered == ["drop item_bytes", "pass items through a msgq"]


def test_spi_chip_select_is_required_by_the_schema_and_missing_it_offers_free_pins() -> None:
    schema = Plan.model_json_schema()
    devices = schema["$defs"]["Resources"]["properties"]["devices"]["items"]
    variants = {ref["$ref"].rsplit("/", 1)[1] for ref in devices["oneOf"]}
    assert variants == {"I2cDevice", "SpiDevice"}
    assert "chip_select" in schema["$defs"]["SpiDevice"]["required"]
    assert "address" in schema["$defs"]["I2cDevice"]["required"]
    data = {
        "target": "stm32h743",
        "resources": {"devices": [{"name": "flash", "bus": "spi", "controller": "SPI1", "frequency_hz": 1_000_000}]},
        "operations": [{"op": "spi_transfer", "name": "t", "device": "flash", "read_bytes": 2}],
    }
    result = run_plan(copy.deepcopy(data))
    [missing] = result.evidence
    assert (missing.code, missing.location) == ("E_PLAN_FIELD", "resources.devices[0].chip_select")
    assert missing.relaxations
    for relaxation in missing.relaxations:
        assert _passes(apply_patch(data, relaxation.patch)), relaxation.description


# --- the tool's own output must pass its own checks -------------------------------------------------------
SPI_WRITE = {
    "target": "stm32h743",
    "resources": {
        "devices": [
            {"name": "dac", "bus": "spi", "controller": "SPI1", "chip_select": "PA4", "frequency_hz": 1_000_000}
        ]
    },
    "operations": [{"op": "spi_transfer", "name": "out", "device": "dac", "write_bytes": 2, "read_bytes": 0}],
}


def test_a_write_only_spi_transfer_passes_its_own_verifier() -> None:
    for framework in ("zephyr", "hal"):
        result = run_plan({**copy.deepcopy(SPI_WRITE), "framework": framework})
        assert result.status is Status.PASS, [(e.code, e.message, e.relaxations) for e in result.evidence]


def test_logging_a_transfer_that_reads_nothing_is_refused_with_fixes_that_pass() -> None:
    data = copy.deepcopy(SPI_WRITE)
    data["operations"].append({"op": "log", "message": "dac", "values": ["out"]})
    offered = _every_relaxation_passes(data, "E_UNKNOWN_RESOURCE")
    assert offered == ["set out's read_bytes to 1", "print no operation's value"]


def test_log_refuses_a_non_value_operation_with_a_way_forward() -> None:
    data = {
        "target": "nrf52840",
        "operations": [
            {"op": "gpio_blink", "name": "beat", "led": "led0", "period_ms": 500},
            {"op": "log", "message": "state", "values": ["beat"]},
        ],
    }
    assert "print no operation's value" in _every_relaxation_passes(data, "E_UNKNOWN_RESOURCE")


def test_an_spi_device_slower_than_the_controller_can_clock_is_refused_with_the_slowest_rate() -> None:
    data = {**copy.deepcopy(SPI_WRITE), "framework": "hal"}
    data["resources"]["devices"][0]["frequency_hz"] = 100_000
    assert _every_relaxation_passes(data, "E_CLOCK_RANGE") == ["clock dac at 250000 Hz"]


# --- relaxations that help ---------------------------------------------------------------------------------
def test_the_wifi_shorthands_relaxations_patch_the_document_as_written() -> None:
    data = {"target": "stm32f407", "wifi": True, "operations": [{"op": "gpio_blink", "led": "led0", "period_ms": 500}]}
    offered = _every_relaxation_passes(data, "E_TARGET_UNSUPPORTED")
    assert offered == ["drop this wifi_station"]


def test_a_one_operation_plan_is_never_offered_to_drop_it_but_is_offered_where_it_runs() -> None:
    data = {"target": "native_sim", "operations": [{"op": "ble_advertise", "name": "adv", "device_name": "x"}]}
    result = run_plan(copy.deepcopy(data))
    [unsupported] = result.evidence
    assert "native_sim has no Bluetooth LE radio" in unsupported.message and "zephyr on nrf52840" in unsupported.message
    offered = _every_relaxation_passes(data, "E_TARGET_UNSUPPORTED")
    assert "use target nrf52840 (zephyr)" in offered and not any(d.startswith("drop") for d in offered)


def test_an_unknown_field_is_offered_the_required_field_it_stands_for() -> None:
    op = {"op": "flash_store", "name": "f", "size_bytes": 64}
    data = {"target": "stm32f407", "framework": "hal", "operations": [op]}
    evidence = run_plan(copy.deepcopy(data)).evidence
    renames = [r.description for e in evidence for r in e.relaxations if r.description.startswith("rename")]
    assert renames == ["rename 'size_bytes' to 'length_bytes'"]


# --- what a plan may be ------------------------------------------------------------------------------------
def test_a_plan_of_a_block_alone_is_valid_and_the_schema_says_so() -> None:
    assert _passes({"target": "nrf52840", "config": {"hardening": {"asserts": True}}})
    anyof = Plan.model_json_schema()["anyOf"]
    assert {"required": ["operations"], "properties": {"operations": {"minItems": 1}}} in anyof
    assert {tuple(a["required"]) for a in anyof} >= {("config",), ("bootloader",), ("devicetree",)}
    empty = run_plan({"target": "nrf52840", "operations": []})
    assert [e.code for e in empty.evidence] == ["E_PLAN_FIELD"] and "plan-level block" in empty.evidence[0].message


def test_a_declared_thread_no_operation_uses_is_reported() -> None:
    _, target, data, code, _ = SEEDED[5]
    assert _every_relaxation_passes({"target": target, **data}, code) == ["drop thread 'worker'"]


# --- one fact, one rule --------------------------------------------------------------------------------------
def test_entropy_is_one_fact_for_stack_canaries_and_random() -> None:
    for target in ("nrf52840", "nrf52840dongle", "stm32f407"):
        canaries = run_plan({"target": target, "config": {"hardening": {"stack_canaries": True}}})
        random = run_plan({"target": target, "stack_bytes": 4096, "operations": [{"op": "random"}]})
        assert (canaries.status is Status.PASS) == (random.status is Status.PASS), target
    assert _passes({"target": "nrf52840", "config": {"hardening": {"stack_canaries": True}}})


SENSOR = {
    "target": "nrf52840",
    "resources": {"devices": [{"name": "accel", "bus": "i2c", "controller": "TWIM0", "address": 0x18}]},
    "devicetree": {"nodes": [{"device": "accel", "compatible": "st,lis2dh", "interrupt": "P1.10"}]},
    "operations": [{"op": "sensor_trigger", "name": "motion", "device": "accel", "channel": "accel_xyz"}],
}


def test_a_trigger_keeps_only_a_channel_its_driver_fills_as_a_read_does() -> None:
    for op in ("sensor_trigger", "sensor_read"):
        data = copy.deepcopy(SENSOR)
        data["operations"][0].update(op=op, channel="die_temp")
        if op == "sensor_read":
            data["operations"][0]["interval_ms"] = 100
        assert _every_relaxation_passes(data, "E_SENSOR_CHANNEL") == ["read accel_xyz"]


def test_a_trigger_on_a_node_with_an_unknown_binding_is_not_told_the_node_is_missing() -> None:
    data = copy.deepcopy(SENSOR)
    data["devicetree"]["nodes"][0]["compatible"] = "acme,foo9"
    evidence = run_plan(copy.deepcopy(data)).evidence
    assert [e.code for e in evidence] == ["E_DT_BINDING_UNKNOWN"]
    assert _every_relaxation_passes(data, "E_DT_BINDING_UNKNOWN") == ["describe it as st,lis2dh"]


def test_the_console_uart_may_be_given_its_own_console_pins() -> None:
    group = {"peripheral": "UARTE0", "pins": {"tx": "P0.06", "rx": "P0.08"}}
    hello = {"op": "uart_print", "message": "hi"}
    data = {"target": "nrf52840", "devicetree": {"pinctrl": [group]}, "operations": [hello]}
    assert _passes(data)
    group["peripheral"] = "UARTE1"
    assert not _passes(data)
