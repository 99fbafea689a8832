"""Every example plan, on every target and framework that accepts it, lowers and verifies clean.

A cell (example, target, framework) is *supported* when validation accepts the retargeted plan; each
supported cell must then get a clean verdict from the independent verifier. Frameworks register in
``lower.FRAMEWORKS``, so the matrix grows as lowerings land. Every example must also pass on the target
it names, so no example can drift into being silently unsupported everywhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.lower import frameworks
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.resources import data_dir

EXAMPLES = sorted(data_dir("examples").glob("*.yaml"))

#: Operation families the examples must cover (the issue's catalog), matched on op-name prefixes.
FAMILIES = {
    "gpio": ("gpio_",),
    "uart": ("uart_",),
    "i2c": ("i2c_",),
    "spi": ("spi_",),
    "adc": ("adc_",),
    "pwm": ("pwm_",),
    "timer": ("timer_",),
    "watchdog": ("watchdog",),
    "dma": ("dma_mem2mem",),
    "dma peripheral-to-memory": ("dma_periph_rx",),
    "isr handoff": ("isr_handoff",),
    "threading": ("producer_consumer", "shared_state_mutex", "lock_order"),
    "sensor": ("sensor_read",),
    "log": ("log",),
    "storage": ("kv_record", "flash_store"),
    "settings": ("settings_value",),
    "filesystem": ("fs_file",),
    "ring log": ("ring_log",),
    "update": ("image_confirm", "image_stream"),
    "memory": ("mem_slab", "stack_report"),
    "ble": ("ble_",),
    "ble central": ("ble_scan",),
    "wifi": ("wifi_",),
    "net": ("udp_", "tcp_", "mqtt_"),
    "net application protocols": ("tls_credentials", "dns_resolve", "http_request", "coap_request"),
    "power": ("sleep", "pm_lock", "device_pm"),
    "crypto": ("hash", "cipher", "mac", "kdf", "random"),
    "events and reactions": ("react", "react_led"),
    "kernel": ("semaphore", "work_item", "event_flags", "mutex_lock"),
    "isr-thread state and timing": ("spinlock_state", "event_latency"),
    "watchdog supervision": ("task_watchdog",),
    "message queues": ("msg_queue",),
    "heaps": ("heap_region",),
    "isr-thread double buffers": ("ping_pong",),
    "direct and zero-latency interrupts": ("direct_irq",),
    "cycle-counter timing": ("cycle_timing",),
    "barriers": ("barrier",),
    "memory domains": ("memory_domain",),
    "core clock": ("core_clock",),
    "can": ("can_send", "can_receive"),
    "dma scatter-gather": ("dma_scatter",),
    "counter": ("counter_alarm",),
    "uart async tx": ("uart_tx_async",),
    "i2c target": ("i2c_target",),
    "adc analog settings": ("adc_sample",),
    "uart polled echo": ("uart_echo",),
    "protected storage": ("protected_store",),
}


def test_examples_cover_every_operation_family() -> None:
    ops = {op.op for path in EXAMPLES for op in load_plan(path).operations}
    for family, prefixes in FAMILIES.items():
        assert any(op.startswith(prefixes) for op in ops), f"no example for the {family} family"
    assert (data_dir("examples") / "adc_dt.yaml").is_file() and (data_dir("examples") / "uart_hello.yaml").is_file()


def _cells() -> list[tuple[str, str]]:
    registered = frameworks()
    return [
        (target, framework)
        for target in target_ids()
        for framework in load_target(target).frameworks
        if framework in registered
    ]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_is_clean_wherever_it_is_valid(example: Path) -> None:
    plan = load_plan(example)
    own_target = plan.target
    assert own_target is not None, f"{example.name} names no target"
    failures: list[str] = []
    passed: list[tuple[str, str]] = []
    for target, framework in _cells():
        result = run_plan(plan, target=target, framework=framework)
        if result.status is Status.INVALID:
            continue
        if result.status is Status.PASS:
            passed.append((target, framework))
            continue
        detail = "; ".join(f"{e.code} {e.location}: {e.message}" for e in result.evidence[:3])
        failures.append(f"{target}/{framework}: {detail}")
    assert not failures, f"{example.name} verified with failures:\n" + "\n".join(failures)
    own_default = load_target(own_target).frameworks[0]
    assert (own_target, plan.framework or own_default) in passed, (
        f"{example.name} is not clean on its own target {own_target}"
    )


@pytest.mark.parametrize(
    ("example", "targets"),
    [
        ("adc_dt.yaml", ("nrf52840", "stm32h743", "stm32f407", "native_sim")),
        ("gpio_blink.yaml", ("nrf52840", "stm32h743", "stm32f407", "native_sim")),
        ("uart_hello.yaml", ("nrf52840", "stm32h743", "stm32f407", "native_sim")),
        ("threading.yaml", ("nrf52840", "stm32h743", "stm32f407", "native_sim")),
        ("dma_h7_cache.yaml", ("stm32h743", "stm32f407")),
    ],
)
def test_portable_examples_are_clean_with_zephyr_on_each_board(example: str, targets: tuple[str, ...]) -> None:
    """The retargeting promise: these plans are valid *and* clean on every named Zephyr board."""
    for target in targets:
        result = run_plan(data_dir("examples") / example, target=target, framework="zephyr")
        assert result.status is Status.PASS, (target, [f"{e.code}: {e.message}" for e in result.evidence])
