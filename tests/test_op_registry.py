"""The op registry is pinned, and the schema, the index and the support matrix are computed from it."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from rac_fw.domain import schema_for
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.plan import catalog
from rac_fw.domains.firmware.plan.matrix import frameworks_for, realizes, table
from rac_fw.domains.firmware.plan.model import OPERATION_KINDS, Plan
from rac_fw.domains.firmware.plan.registry import kinds, sections, spec, specs

#: Every operation the registry must find (a new op spec is added here on purpose, like a runner in west).
PINNED = {
    "gpio_blink", "gpio_input_irq", "gpio_read", "gpio_set",
    "uart_print", "uart_rx_irq", "uart_line_read",
    "i2c_transfer", "i2c_scan", "spi_transfer",
    "adc_read", "adc_periodic", "adc_scan",
    "pwm_fixed", "pwm_fade",
    "timer_periodic", "timer_oneshot",
    "watchdog",
    "dma_mem2mem", "dma_periph_rx",
    "isr_handoff", "producer_consumer", "shared_state_mutex", "lock_order",
    "sensor_read", "sensor_trigger",
    "log",
    "kv_record", "settings_value", "flash_store", "image_confirm", "image_stream",
    "fs_file", "ring_log",
    "mem_slab", "stack_report",
    "ble_advertise", "ble_gatt_service", "ble_scan",
    "wifi_station",
    "udp_send", "tcp_client", "tcp_server", "mqtt_publish",
    "tls_credentials", "dns_resolve", "http_request", "coap_request",
    "sleep", "pm_lock", "device_pm",
    "hash", "cipher", "mac", "kdf", "random", "protected_store",
    "react", "react_led", "sw_irq",
    "semaphore", "work_item", "spinlock_state", "event_latency", "event_flags", "mutex_lock",
    "task_watchdog",
    "msg_queue", "heap_region", "ping_pong", "direct_irq", "cycle_timing", "barrier", "memory_domain",
    "once_init",
    "core_clock", "can_send", "can_receive",
    "dma_scatter", "counter_alarm", "uart_tx_async", "i2c_target", "adc_sample", "uart_echo",
}  # fmt: skip


def test_registry_is_pinned() -> None:
    assert set(kinds()) == PINNED
    assert kinds() == OPERATION_KINDS
    for s in specs():
        assert s.model.__doc__, f"{s.kind} has no docstring (its manual)"
        assert s.realizations, f"{s.kind} is realized by no framework: it must not be in the schema"


def test_the_plan_union_is_the_registry() -> None:
    mapping = Plan.model_json_schema()["properties"]["operations"]["items"]["discriminator"]["mapping"]
    assert set(mapping) == PINNED


def test_matrix_follows_each_specs_realizations_and_the_facts() -> None:
    for target_id in target_ids():
        target = load_target(target_id)
        for kind, frameworks in table(target).items():
            for framework in frameworks:
                assert framework in target.frameworks and spec(kind).realization(framework) is not None
    nrf, native = load_target("nrf52840"), load_target("native_sim")
    assert not realizes("zephyr", "dma_mem2mem", nrf), "EasyDMA copies no memory to memory"
    assert not realizes("zephyr", "pwm_fixed", native), "native_sim has no pwm-leds node"
    assert not realizes("hal", "isr_handoff", load_target("stm32f407")), "no RTOS under the HAL lowering"
    assert frameworks_for("sensor_read", nrf) == ["zephyr"]


def test_index_lists_every_realizable_op_with_purpose_and_place() -> None:
    index = schema_for("firmware", index=True)
    listed = {kind: where for where, group in index["operations"].items() for kind in group}
    assert set(listed) == {k for k in kinds() if any(table(load_target(t)).get(k) for t in target_ids())}
    assert "zephyr:native_sim,stm32f407,stm32h743" in listed["dma_mem2mem"].split()
    assert index["operations"][listed["dma_mem2mem"]]["dma_mem2mem"].startswith("Copy src to dst by DMA")
    assert index["targets"]["nrf52840"] == ["zephyr", "baremetal"]
    for kind, where in listed.items():  # the group key names the frameworks that realize each member
        realizing = {f for t in target_ids() for f in frameworks_for(kind, load_target(t))}
        assert _frameworks(where) == realizing, (kind, where)


def _frameworks(where: str) -> set[str]:
    """The framework names in an index group key (``zephyr:a,b espidf hal-c``)."""
    return {re.split("[:-]", item)[0] for item in where.split()}


def test_index_lists_the_plan_blocks_with_where_they_are_realized() -> None:
    index = schema_for("firmware", index=True)
    listed = {name: where for where, group in index["blocks"].items() for name in group}
    assert set(listed) == {b.name for b in sections()}
    for block in sections():
        frameworks = {f for t in target_ids() for f in load_target(t).frameworks if block.realizes(f, load_target(t))}
        assert _frameworks(listed[block.name]) == frameworks
        schema = schema_for("firmware", part=block.name)
        assert set(schema["properties"]) == set(block.model.model_fields)


def test_op_schema_is_the_models_schema_with_its_support_row() -> None:
    schema = schema_for("firmware", part="adc_scan")
    assert schema["properties"]["op"]["const"] == "adc_scan" and "$defs" not in json.dumps(schema)
    assert schema["x-realized"]["stm32f407"] == frameworks_for("adc_scan", load_target("stm32f407"))
    assert "buffers" in schema_for("firmware", part="resources")["properties"]
    with pytest.raises(catalog.UnknownOperation):
        catalog.op_schema("no_such_op")


def test_cli_schema_op_and_index() -> None:
    run = [sys.executable, "-m", "rac_fw.cli", "schema", "firmware"]
    one = subprocess.run([*run, "--op", "gpio_blink"], capture_output=True, text=True, timeout=120)
    assert one.returncode == 0 and json.loads(one.stdout)["properties"]["op"]["const"] == "gpio_blink"
    bad = subprocess.run([*run, "--op", "no_such_op"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "E_UNKNOWN_SCHEMA [--op]" in bad.stdout + bad.stderr
    index = subprocess.run([*run, "--index"], capture_output=True, text=True, timeout=120)
    assert index.returncode == 0
    assert any("gpio_blink" in group for group in json.loads(index.stdout)["operations"].values())
