"""Obligations read chip facts, not assumptions: kernel ticks, bus clock limits, devicetree RAM pools.

Each test names the fact in the pack it depends on, checks the verdict the obligation derives from it,
and applies the first relaxation to show the plan then validates.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from rac_fw.contract import Evidence, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.query import Clocks, kernel_tick_hz, serving_controllers
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.obligations.bus import bus_clock
from rac_fw.domains.firmware.obligations.instances import block_base, sharing
from rac_fw.domains.firmware.obligations.memory import budget_pools
from rac_fw.domains.firmware.placement import placement
from rac_fw.domains.firmware.plan.load import parse_plan


def _check(target_id: str, data: dict[str, Any], framework: str | None = None) -> list[Evidence]:
    return check(parse_plan({"target": target_id, **data}, "test"), load_target(target_id), framework)


def _repaired(target_id: str, data: dict[str, Any], evidence: Evidence, framework: str | None = None) -> bool:
    fixed = apply_patch({"target": target_id, **data}, evidence.relaxations[0].patch)
    return _check(target_id, fixed, framework) == []


def test_kernel_tick_is_a_per_target_fact() -> None:
    ticks = {t: kernel_tick_hz(load_target(t), "zephyr") for t in ("nrf52840", "stm32h743", "stm32f407", "native_sim")}
    assert ticks == {"nrf52840": 32768, "stm32h743": 10000, "stm32f407": 10000, "native_sim": 100}
    assert kernel_tick_hz(load_target("stm32h743"), "hal") is None  # no kernel tick outside an RTOS


KERNEL_TIMER_CASES = [
    ("stm32h743", 100, True),  # one 100 µs tick at 10 kHz
    ("nrf52840", 100, False),  # 3.28 RTC ticks: 91.6 µs, 8 % short
    ("nrf52840", 10_000, True),  # 327.68 ticks: within 0.1 %
    ("native_sim", 5_000, False),  # half of a 10 ms tick
    ("native_sim", 20_000, True),
]


def kernel_timer_plan(period_us: int) -> dict[str, Any]:
    return {"operations": [{"op": "timer_periodic", "period_us": period_us, "source": "kernel"}]}


@pytest.mark.parametrize(("target_id", "period_us", "ok"), KERNEL_TIMER_CASES)
def test_kernel_timer_periods_follow_the_target_tick(target_id: str, period_us: int, ok: bool) -> None:
    data = kernel_timer_plan(period_us)
    found = _check(target_id, data, "zephyr")
    if ok:
        assert found == []
        return
    assert [e.code for e in found] == ["E_TIMER_RANGE"]
    tick = next(m for m in found[0].magnitudes if m.name == "tick")
    assert tick.value == pytest.approx(1e6 / kernel_tick_hz(load_target(target_id), "zephyr"))  # type: ignore[operator]
    assert _repaired(target_id, data, found[0], "zephyr")


#: A free GPIO per board for an SPI chip select.
CHIP_SELECT = {"stm32h743": "PD14", "stm32f407": "PE3", "nrf52840": "P1.01"}


def bus_plan(target_id: str, bus: str, controller: str, hz: int) -> dict[str, Any]:
    """One device on ``controller`` at ``hz``: a chip select for SPI, address 0x48 for I2C."""
    extra = {"chip_select": CHIP_SELECT[target_id]} if bus == "spi" else {"address": 0x48}
    return _devices(bus, controller, hz, **extra)


def _devices(bus: str, controller: str, hz: int, **more: Any) -> dict[str, Any]:
    device = {"name": "dev", "bus": bus, "controller": controller, "frequency_hz": hz, **more}
    op = (
        {"op": "i2c_transfer", "device": "dev", "register_index": 0, "read_bytes": 1}
        if bus == "i2c"
        else {"op": "spi_transfer", "device": "dev", "write_bytes": 1, "read_bytes": 1}
    )
    return {"resources": {"devices": [device]}, "operations": [op]}


BUS_CLOCK_CASES = [
    ("stm32f407", "zephyr", "i2c", "I2C1", 1_000_000, 400_000),  # F4 I2C: no Fast-mode Plus
    ("stm32h743", "zephyr", "i2c", "I2C1", 1_000_000, None),  # H7 I2C: Fm+ 1 MHz
    ("stm32h743", "zephyr", "i2c", "I2C1", 2_000_000, 1_000_000),
    ("nrf52840", "zephyr", "i2c", "TWIM0", 300_000, 250_000),  # TWIM: K100/K250/K400 only
    ("nrf52840", "zephyr", "i2c", "TWIM0", 250_000, None),
    ("nrf52840", "zephyr", "spi", "SPIM0", 16_000_000, 8_000_000),  # SPIM0-2: M8 at most
    ("nrf52840", "zephyr", "spi", "SPIM3", 16_000_000, None),  # SPIM3: up to M32
    ("nrf52840", "zephyr", "spi", "SPIM1", 3_000_000, None),  # an SPI rate is a ceiling: runs at M2
    ("stm32f407", "zephyr", "spi", "SPI2", 30_000_000, 21_000_000),  # APB1 42 MHz / 2
    ("stm32f407", "zephyr", "spi", "SPI1", 30_000_000, None),  # APB2 84 MHz / 2
    ("stm32f407", "baremetal", "spi", "SPI1", 30_000_000, 8_000_000),  # reset clocks: 16 MHz / 2
]


@pytest.mark.parametrize(("target_id", "framework", "bus", "controller", "hz", "relaxed"), BUS_CLOCK_CASES)
def test_bus_clocks_are_checked_against_the_controller_facts(
    target_id: str, framework: str, bus: str, controller: str, hz: int, relaxed: int | None
) -> None:
    data = bus_plan(target_id, bus, controller, hz)
    found = [e for e in _check(target_id, data, framework) if e.code == "E_CLOCK_RANGE"]
    if relaxed is None:
        assert found == []
        return
    assert len(found) == 1 and found[0].location == "resources.devices[0].frequency_hz"
    assert found[0].objects == ["dev", controller]
    assert found[0].relaxations[0].patch[0]["value"] == relaxed
    fixed = apply_patch({"target": target_id, **data}, found[0].relaxations[0].patch)
    assert not [e for e in _check(target_id, fixed, framework) if e.code == "E_CLOCK_RANGE"]


def test_bus_clock_limits_come_from_extra_tables() -> None:
    f4, h7, nrf = load_target("stm32f407"), load_target("stm32h743"), load_target("nrf52840")
    assert bus_clock(Clocks(f4, "zephyr"), "i2c", "I2C1").max_hz == (f4.i2c.max_hz if f4.i2c else None) == 400_000
    assert bus_clock(Clocks(h7, "zephyr"), "i2c", "I2C4").max_hz == 1_000_000
    twim = bus_clock(Clocks(nrf, "zephyr"), "i2c", "TWIM1")
    assert twim.settings == (100_000, 250_000, 400_000) and twim.nearest(399_999) == 250_000
    assert bus_clock(Clocks(h7, "hal"), "spi", "SPI1").max_hz == 32_000_000  # per_ck 64 MHz / 2
    native = Clocks(load_target("native_sim"), "zephyr")
    assert bus_clock(native, "i2c", "i2c0").max_hz == 400_000  # no facts: fast mode


#: 118 KB of heap fits Zephyr's 128 KB sram0 pool on the F407 with its overhead and stacks, not 112 KB.
F407_HEAP_PLAN: dict[str, Any] = {"heap_bytes": 118 * 1024, "operations": [{"op": "uart_print", "message": "hi"}]}
F407_HEAP_TOO_BIG: dict[str, Any] = {**F407_HEAP_PLAN, "heap_bytes": 130 * 1024}

#: A Zephyr ADC scan into a plan DMA buffer (Zephyr's ADC driver owns its DMA: refused).
ZEPHYR_ADC_SCAN_DMA: dict[str, Any] = {
    "target": "stm32h743",
    "framework": "zephyr",
    "resources": {"buffers": [{"name": "adc_buf", "size_bytes": 32, "role": "dma_rx", "element_bytes": 2}]},
    "operations": [{"op": "adc_scan", "channels": [{"pin": "PA0"}, {"pin": "PA3"}], "buffer": "adc_buf"}],
}


def test_zephyr_ram_budget_pools_sram1_and_sram2_on_the_f407() -> None:
    """Zephyr's sram0 is SRAM1 + SRAM2 (128 KB); the bare-metal linker script keeps them apart."""
    f4 = load_target("stm32f407")
    sram1, sram2 = f4.region("SRAM1"), f4.region("SRAM2")
    assert sram1 is not None and sram2 is not None and sram1.dt_covers == ("SRAM2",)
    pool = sram1.size + sram2.size
    assert pool == 128 * 1024
    assert budget_pools(f4, "zephyr")["SRAM2"] == ("SRAM1", pool)
    assert budget_pools(f4, "baremetal")["SRAM2"] == ("SRAM2", sram2.size)
    data = F407_HEAP_PLAN
    assert [e.code for e in _check("stm32f407", data, "zephyr")] == []
    found = [e for e in _check("stm32f407", data, "baremetal") if e.code == "E_RAM_BUDGET"]
    assert found and next(m.value for m in found[0].magnitudes if m.name == "available") == sram1.size
    too_big = F407_HEAP_TOO_BIG
    zephyr = [e for e in _check("stm32f407", too_big, "zephyr") if e.code == "E_RAM_BUDGET"]
    assert zephyr and next(m.value for m in zephyr[0].magnitudes if m.name == "available") == pool
    assert "SRAM1+SRAM2" in zephyr[0].message
    assert _repaired("stm32f407", too_big, zephyr[0], "zephyr")


def test_adc_scan_into_a_dma_buffer_needs_a_framework_that_realizes_it() -> None:
    """Zephyr's ADC driver owns its DMA, so a Zephyr scan into a plan's DMA buffer is refused; the
    relaxations (a framework that does it from the facts, or a CPU scan) each make the plan valid."""
    plan = ZEPHYR_ADC_SCAN_DMA
    target = load_target("stm32h743")
    found = [e for e in check(parse_plan(plan), target, "zephyr") if e.code == "E_TARGET_UNSUPPORTED"]
    assert len(found) == 1 and found[0].location == "operations[0].buffer" and "adc_buf" in found[0].objects
    descriptions = [r.description for r in found[0].relaxations]
    assert descriptions == ["use framework hal", "scan with the CPU (no DMA buffer)"]
    for relaxation in found[0].relaxations:
        repaired = parse_plan(apply_patch(plan, relaxation.patch))
        assert check(repaired, target, repaired.framework or "zephyr") == []


def _svd_peripherals(svd: Path) -> dict[str, ET.Element]:
    return {p.findtext("name") or "": p for p in ET.parse(svd).getroot().iter("peripheral")}


def _dmareq_ids(peripheral: ET.Element) -> dict[str, int]:
    """The DMAREQ_ID enumeration of a DMAMUX (signal name → request line), as the SVD states it."""
    field = next(f for f in peripheral.iter("field") if f.findtext("name") == "DMAREQ_ID")
    return {v.findtext("name") or "": int(v.findtext("value") or "0", 0) for v in field.iter("enumeratedValue")}


def test_stm32h743_dmamux_request_lines_are_the_svd_enumerations(shared_dir: Path) -> None:
    """Every request line the pack states is the SVD's DMAREQ_ID value; LPUART1 (D3) has lines on
    DMAMUX2 only, so only BDMA (which DMAMUX2 feeds) serves it and its buffers go to SRAM4."""
    svd = _svd_peripherals(shared_dir / "svd" / "stm32h743.svd")
    target = load_target("stm32h743")
    muxes = target.dmamux
    assert set(muxes) == {"DMAMUX1", "DMAMUX2"}
    for name, mux in muxes.items():
        enumeration = _dmareq_ids(svd[name])
        assert {request: enumeration[f"{request.lower()}_dma"] for request in mux.requests} == mux.requests
    dmamux1 = _dmareq_ids(svd["DMAMUX1"])
    assert not [signal for signal in dmamux1 if signal.startswith("lpuart1")]
    assert [c.name for c in serving_controllers(target, "LPUART1_RX")] == ["BDMA"]
    assert [c.name for c in serving_controllers(target, "USART1_RX")] == ["DMA1", "DMA2"]
    plan = parse_plan(
        {
            "resources": {"buffers": [{"name": "lp_rx", "size_bytes": 64, "role": "dma_rx"}]},
            "operations": [{"op": "dma_periph_rx", "peripheral": "LPUART1_RX", "buffer": "lp_rx"}],
        }
    )
    assert placement(plan, target)["lp_rx"] == "SRAM4"


def test_nrf52840_shared_instances_are_the_svd_blocks_at_one_base_address(shared_dir: Path) -> None:
    """The sharing E_PERIPHERAL_SHARED judges is read off the base addresses (SVD ``alternatePeripheral``
    views of one block), not a list; devicetree node addresses land on SVD blocks."""
    svd = _svd_peripherals(shared_dir / "svd" / "nrf52840.svd")
    target = load_target("nrf52840")
    base_of = {name: int(p.findtext("baseAddress") or "0", 0) for name, p in svd.items()}
    for instance in ("TWIM0", "SPIM1"):
        base = base_of[instance]
        assert block_base(target, instance) == base
        assert sharing(target, base) == sorted(n for n, b in base_of.items() if b == base)
    assert sharing(target, base_of["TWIM0"]) == ["SPI0", "SPIM0", "SPIS0", "TWI0", "TWIM0", "TWIS0"]
    assert target.dt_reg and set(target.dt_reg.values()) <= set(base_of.values())
    assert block_base(target, "I2C0") == block_base(target, "SPI0") == base_of["TWIM0"]
    assert not [f.name for f in fields(target) if "shar" in f.name]  # sharing is derived, not hand-listed


@pytest.mark.parametrize("target_id", ["nrf52840", "stm32h743"])
def test_pwm_led_nodes_name_the_board_led_pin_they_drive(target_id: str) -> None:
    """The observation lists ``pwm-led0``; the facts say which node it is and which board LED's pin that
    node drives (nRF52840-DK: LED1 = led0; Nucleo-H743ZI: LD3 red, *not* led0)."""
    target = load_target(target_id)
    table = target.board.pwm_leds
    assert table
    for entry in table:
        assert entry.alias is not None and target.board.dt_aliases[entry.alias] == entry.node
        assert entry.node in target.board.dt_node_labels
        assert entry.pin in {led.pin for led in target.board.leds}
        assert entry.pwm in target.board.dt_node_labels
