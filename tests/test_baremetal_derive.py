"""Register values derived from facts, checked against reference-manual worked examples and the SVD."""

from __future__ import annotations

from pathlib import Path

import pytest

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower.baremetal import derive


def test_usart_brr_matches_rm0090_oversampling_16() -> None:
    # RM0090 Table 136: fPCLK 16 MHz, 115200 baud, OVER8 = 0 → USARTDIV 8.6875 → BRR 0x8B (115.108 kBd).
    baud = derive.usart_brr(16_000_000, 115_200)
    assert baud.register == 0x8B
    assert round(baud.actual) == 115_108
    assert baud.error_pct < 0.1
    # H7 kernel clock 64 MHz (reset HSI): BRR = 64e6 / 115200 = 555.6 → 556.
    assert derive.usart_brr(64_000_000, 115_200).register == 556
    with pytest.raises(derive.DerivationError):
        derive.usart_brr(16_000_000, 2_000_000)


def test_uarte_table_is_the_svd_enumeration(shared_dir: Path) -> None:
    from lxml import etree

    tree = etree.parse(str(shared_dir / "svd" / "nrf52840.svd"))
    found: dict[int, int] = {}
    for peripheral in tree.iter("peripheral"):
        if peripheral.findtext("name") != "UARTE0":
            continue
        for register in peripheral.iter("register"):
            if register.findtext("name") == "BAUDRATE":
                for value in register.iter("enumeratedValue"):
                    rate = value.findtext("name").removeprefix("Baud").replace("1M", "1000000")
                    found[int(rate)] = int(value.findtext("value"), 16)
    nrf = load_target("nrf52840")
    assert nrf.uart is not None and nrf.uart.baudrate_register == found  # the pack's table is the SVD's enumeration
    assert derive.uarte_baudrate(nrf, 115_200).register == found[115_200]
    assert derive.uarte_baudrate(nrf, 115_200).actual == nrf.uart.baud_table[115_200]
    with pytest.raises(derive.DerivationError, match="not 100000"):
        derive.uarte_baudrate(nrf, 100_000)


def test_clock_gates_come_from_the_rcc_fields() -> None:
    f4, h7 = load_target("stm32f407"), load_target("stm32h743")
    assert derive.clock_gate(f4, "USART2") == derive.ClockGate("APB1ENR", "USART2EN", "APB1")
    assert derive.clock_gate(f4, "DMA2") == derive.ClockGate("AHB1ENR", "DMA2EN", "AHB1")
    assert derive.clock_gate(f4, "GPIOD") == derive.ClockGate("AHB1ENR", "GPIODEN", "AHB1")
    assert derive.clock_gate(h7, "GPIOD") == derive.ClockGate("AHB4ENR", "GPIODEN", "AHB4")
    assert derive.clock_gate(h7, "USART3") == derive.ClockGate("APB1LENR", "USART3EN", "APB1")
    assert derive.clock_gate(h7, "ADC1").field == "ADC12EN"
    assert derive.clock_gate(load_target("nrf52840"), "UARTE0") is None


def test_timer_prescalers_fit_the_counter() -> None:
    # TIM3 (16 bit) at 16 MHz for 500 ms: 8e6 ticks → PSC 122, ARR 65040 (0.5000 s within one tick).
    setting = derive.stm32_timer(16_000_000, 0.5, 16)
    assert setting.reload <= 0xFFFF and setting.prescaler == 122
    assert abs(setting.period_s - 0.5) < 1 / 16_000_000 * (setting.prescaler + 1)
    assert derive.stm32_timer(16_000_000, 0.5, 32) == derive.TimerSetting(0, 7_999_999, 16_000_000)
    # nRF TIMER: 16 MHz base, 32-bit: 1 s needs no prescaler.
    dividers = load_target("nrf52840").timers["TIMER1"].prescalers
    assert dividers == tuple(2**n for n in range(10))  # PRESCALER 0..9 (PS §6.30)
    assert derive.nrf_timer(16_000_000, 1.0, 32, dividers) == derive.TimerSetting(0, 15_999_999, 16_000_000)
    assert derive.nrf_timer(16_000_000, 1.0, 16, dividers).prescaler == 8
    with pytest.raises(derive.DerivationError):  # 16-bit at 16 MHz / 512 tops out at ~2.1 s
        derive.nrf_timer(16_000_000, 3.0, 16, dividers)
    assert derive.systick_reload(16_000_000, 1000) == 15_999


def test_watchdog_settings_from_facts() -> None:
    iwdg = load_target("stm32f407").watchdogs["IWDG"]
    setting = derive.iwdg(1000, iwdg)
    assert (setting.prescaler_code, setting.divider, setting.reload) == (1, 8, 3999)
    assert setting.timeout_ms == pytest.approx(1000.0)
    with pytest.raises(derive.DerivationError):
        derive.iwdg(60_000, iwdg)
    wdt = load_target("nrf52840").watchdogs["WDT"]
    assert derive.nrf_wdt(2000, wdt).reload == 65_535


def test_poll_budget_never_under_waits() -> None:
    assert derive.poll_budget(16_000_000, 1000) * derive.POLL_LOOP_CYCLES >= 16_000
    assert derive.pin_ref("PD12") == derive.PinRef("PD12", "GPIOD", 12, 3)
    assert derive.pin_ref("P1.05") == derive.PinRef("P1.05", "P1", 5, 1)
