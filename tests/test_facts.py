"""Fact packs: every pack loads and states the hardware facts the obligations rely on."""

from __future__ import annotations

import json
import shutil

import pytest

from rac_fw.domains.firmware.facts.load import (
    TargetFileError,
    UnknownPeripheral,
    UnknownTarget,
    chip_dir,
    chip_ids,
    interrupts,
    load_pack,
    load_target,
    peripheral,
    target_ids,
    targets_root,
)
from rac_fw.domains.firmware.facts.observe import (
    UnknownDetailKind,
    UnknownName,
    compress_names,
    detail,
    free_pins,
    summary,
)

EXPECTED = {"nrf52840", "stm32h743", "stm32f407", "esp32s3", "native_sim"}
SUMMARY_LIMIT = 8 * 1024


def test_all_five_packs_load_with_consistent_references():
    assert set(target_ids()) >= EXPECTED
    for target_id in EXPECTED:
        target = load_target(target_id)
        assert target.id == target_id
        masters = {m.name for m in target.bus_masters}
        assert "cpu" in masters
        for region in target.memory:
            assert region.size > 0
            assert "cpu" in region.reachable_by, f"{target_id} {region.name}"
            assert set(region.reachable_by) <= masters, f"{target_id} {region.name} names an unknown master"
        for controller in target.dma:
            assert controller.master in masters
        for clock in target.clocks:
            assert clock.parent is None or target.clock(clock.parent) is not None
            for framework, hz in clock.default_hz.items():
                assert framework in {"zephyr", "hal", "baremetal", "espidf"}
                assert 0 < hz <= clock.max_hz, f"{target_id} {clock.name} {framework}"
        board = target.board
        for pin in [led.pin for led in board.leds] + [b.pin for b in board.buttons]:
            assert pin in target.pins, f"{target_id}: board pin {pin} is not a chip pin"
        assert target.frameworks and board.zephyr_board


def test_load_is_cached_per_process():
    assert load_target("stm32h743") is load_target("stm32h743")


def test_unknown_target_lists_known_ids_and_near_matches():
    with pytest.raises(UnknownTarget) as info:
        load_target("stm32h74")
    assert "stm32h743" in info.value.near
    assert set(info.value.known) == set(target_ids())


def test_stm32h743_memory_dma_and_cache_facts():
    target = load_target("stm32h743")
    dtcm, axi = target.region("DTCM"), target.region("AXI_SRAM")
    assert dtcm is not None and axi is not None
    assert "DMA1" not in dtcm.reachable_by and "BDMA" not in dtcm.reachable_by
    assert "MDMA" in dtcm.reachable_by
    assert axi.cacheable and axi.address == 0x24000000 and axi.size == 512 * 1024
    assert [r.name for r in target.regions_reachable_by("BDMA") if r.kind == "sram"] == ["SRAM4"]
    dcache = target.core.dcache
    assert dcache is not None and (dcache.size, dcache.line_bytes) == (16 * 1024, 32)


def test_stm32f407_dma_constraints_and_clock_defaults():
    target = load_target("stm32f407")
    ccm = target.region("CCM")
    assert ccm is not None and ccm.reachable_by == ("cpu",) and ccm.address == 0x10000000
    dma1, dma2 = target.dma_controller("DMA1"), target.dma_controller("DMA2")
    assert dma1 is not None and not dma1.memory_to_memory
    assert dma2 is not None and dma2.memory_to_memory and "ADC1" in dma2.peripherals
    apb1, apb2 = target.clock("APB1"), target.clock("APB2")
    assert apb1 is not None and apb2 is not None
    assert (apb1.default_hz["zephyr"], apb2.default_hz["zephyr"]) == (42_000_000, 84_000_000)
    assert apb1.default_hz["baremetal"] == apb2.default_hz["baremetal"] == 16_000_000


def test_nrf52840_easydma_never_reaches_flash_and_analog_pins():
    target = load_target("nrf52840")
    assert [r.name for r in target.regions_reachable_by("easydma")] == ["RAM"]
    analog = {name: pin.analog for name, pin in target.pins.items() if pin.analog}
    assert analog["P0.02"] == ("AIN0",) and analog["P0.31"] == ("AIN7",) and len(analog) == 8
    assert target.pins["P0.09"].requires and target.pins["P0.18"].reserved
    assert target.pins["P1.15"].can_carry("UARTE1_TXD")  # PSEL: any digital signal
    assert not target.pins["P0.13"].can_carry("AIN0")


def test_esp32s3_pins_strapping_flash_and_adc_units():
    target = load_target("esp32s3")
    assert {n for n, p in target.pins.items() if p.strapping} == {"GPIO0", "GPIO3", "GPIO45", "GPIO46"}
    assert "GPIO22" not in target.pins and "GPIO48" in target.pins
    assert all(target.pins[f"GPIO{n}"].reserved for n in range(26, 33))
    assert target.pins["GPIO11"].analog == ("ADC2_CH0",) and target.pins["GPIO1"].analog == ("ADC1_CH0",)
    psram = target.region("PSRAM")
    assert psram is not None and "gdma" not in psram.reachable_by
    assert target.radio is not None and target.radio.adc_conflict == "ADC2"


def test_native_sim_is_host_with_only_the_emulated_dma():
    target = load_target("native_sim")
    assert target.frameworks == ("zephyr",) and not target.peripherals
    (dma,) = target.dma  # zephyr,dma-emul: memory to memory only, configured by the overlay
    assert dma.memory_to_memory and dma.zephyr_request_slots and not dma.zephyr_status
    assert target.board.leds[0].dt_label == "led0"


def test_stm32_pins_carry_alternate_functions():
    for target_id in ("stm32f407", "stm32h743"):
        target = load_target(target_id)
        assert target.pins["PA9"].af("USART1_TX") == 7
        assert target.pins["PA13"].reserved and target.pins["PA14"].reserved
        assert {p.name for p in target.pins_for("USART2_TX")} >= {"PA2", "PD5"}
        assert not target.pins["PA9"].can_carry("USART2_TX")


def test_peripherals_and_registers_on_demand():
    usart2 = peripheral("stm32f407", "USART2")
    assert usart2.base == 0x40004400 and usart2.derived_from == "USART1"
    brr = next(r for r in usart2.registers if r.name == "BRR")
    assert brr.offset == 0x08 and {f.name for f in brr.fields} >= {"DIV_Mantissa", "DIV_Fraction"}
    with pytest.raises(UnknownPeripheral) as info:
        peripheral("stm32f407", "USART9")
    assert "USART1" in info.value.near or "USART2" in info.value.near


def test_interrupt_list_is_sorted_and_covers_peripheral_irqs():
    for target_id in ("stm32f407", "stm32h743", "nrf52840", "esp32s3"):
        table = interrupts(target_id)
        numbers = [number for number, _, _ in table]
        assert numbers == sorted(set(numbers))
        target = load_target(target_id)
        assert target.irq_count == numbers[-1] + 1
        for p in target.peripherals.values():
            for irq in p.interrupts:
                assert irq.number in numbers


def test_summary_is_small_and_carries_the_key_facts():
    for target_id in EXPECTED:
        target = load_target(target_id)
        data = summary(target)
        encoded = json.dumps(data, separators=(",", ":"))
        assert len(encoded.encode()) <= SUMMARY_LIMIT, f"{target_id}: {len(encoded)} bytes"
        assert [m["name"] for m in data["memory"]] == [r.name for r in target.memory]
        free = data["pins"]["free"]
        assert free or not target.pins
    h7 = summary(load_target("stm32h743"))
    dtcm = next(m for m in h7["memory"] if m["name"] == "DTCM")
    assert "DMA1" not in dtcm["dma"]
    assert h7["peripherals"]["USART"] == "UART4-5,7-8 USART1-3,6"


def test_free_pins_exclude_reserved_and_board_pins():
    target = load_target("stm32f407")
    free = set(free_pins(target))
    assert {"PA13", "PA14", "PD12", "PA0", "PA2", "PH0"}.isdisjoint(free)
    assert "PB0" in free


def test_detail_answers_each_kind_and_near_matches():
    target = load_target("stm32h743")
    region = detail(target, "region", "dtcm")
    assert region["name"] == "DTCM" and "DMA1" in region["unreachable_by"]
    dma = detail(target, "dma", "BDMA")
    assert dma["reachable_regions"] == ["SRAM4", "BKPSRAM"]
    clock = detail(target, "clock", "apb1")
    assert clock["max_hz"] == 120_000_000 and "APB1_TIM" in clock["children"]
    pin = detail(target, "pin", "PA9")
    assert {"signal": "USART1_TX", "af": 7} in pin["functions"]
    usart = detail(target, "peripheral", "USART3")
    assert usart["signals"]["USART3_TX"][0]["af"] == 7 and usart["interrupts"][0]["irqn"] == 39
    with pytest.raises(UnknownName) as info:
        detail(target, "pin", "PA99")
    assert "PA9" in info.value.near
    with pytest.raises(UnknownDetailKind):
        detail(target, "irq", "USART3")


def test_compress_names_makes_ranges():
    assert compress_names(["TIM1", "TIM2", "TIM3", "TIM8", "ADC_Common"]) == "ADC_Common TIM1-3,8"


def _copy_packs(tmp_path):
    """A private copy of the shipped packs (boards/ and chips/), to break one file at a time."""
    shutil.copytree(targets_root(), tmp_path / "targets")
    return tmp_path / "targets" / "boards", tmp_path / "targets" / "chips"


def test_malformed_pack_is_a_located_error(tmp_path):
    boards, chips = _copy_packs(tmp_path)
    chip = chips / "stm32f407" / "chip.yaml"
    text = chip.read_text(encoding="utf-8")
    chip.write_text(text.replace("kind: ccm,", "kind: ccm, cachable: false,"), encoding="utf-8")
    with pytest.raises(TargetFileError) as info:
        load_pack(boards / "stm32f407")
    assert info.value.location.endswith("chips/stm32f407/chip.yaml:memory.3.cachable")
    chip.write_text("id: [unclosed", encoding="utf-8")
    with pytest.raises(TargetFileError, match="malformed YAML"):
        load_pack(boards / "stm32f407")


def test_unknown_keys_in_chip_and_board_packs_are_located_errors(tmp_path):
    """Strict parsing per file: a typo, or a board fact in the chip pack, never loads silently."""
    boards, chips = _copy_packs(tmp_path)
    board = boards / "nrf52840" / "board.yaml"
    original = board.read_text(encoding="utf-8")
    cases = [
        (original.replace("frameworks:", "framework:", 1), "boards/nrf52840/board.yaml:framework"),
        (original.replace("  console:", "  consle:", 1), "boards/nrf52840/board.yaml:board.consle"),
        (original.replace("chip: nrf52840", "chip: nrf52841", 1), "boards/nrf52840/board.yaml:chip"),
        (original.replace("    P0.18: {reserved:", "    P9.18: {reserved:", 1),
         "boards/nrf52840/board.yaml:pins.overrides.P9.18"),
        (original.replace("    P0.18: {reserved:", "    P0.18: {reservd:", 1),
         "boards/nrf52840/board.yaml:pins.P0.18.reservd"),
    ]
    for text, where in cases:
        board.write_text(text, encoding="utf-8")
        with pytest.raises(TargetFileError) as info:
            load_pack(boards / "nrf52840")
        assert info.value.location.endswith(where), (where, info.value.location)
    board.write_text(original, encoding="utf-8")
    chip = chips / "nrf52840" / "chip.yaml"
    chip.write_text(chip.read_text(encoding="utf-8") + "board: {name: x}\n", encoding="utf-8")
    with pytest.raises(TargetFileError, match="unknown key") as info:
        load_pack(boards / "nrf52840")
    assert info.value.location.endswith("chips/nrf52840/chip.yaml:board")


def test_board_packs_share_chip_packs_and_keep_target_ids():
    """Target ids are the board folders (a plan's `target:`); every board names a shipped chip."""
    assert set(target_ids()) >= EXPECTED
    for target_id in target_ids():
        target = load_target(target_id)
        assert target.chip in chip_ids() and chip_dir(target_id) == targets_root() / "chips" / target.chip
    dongle, dk = load_target("nrf52840dongle"), load_target("nrf52840")
    assert dongle.chip == dk.chip == "nrf52840"
    assert (dongle.core, dongle.memory, dongle.dma, dongle.peripherals) == (dk.core, dk.memory, dk.dma, dk.peripherals)
    assert dongle.board != dk.board


@pytest.mark.parametrize(
    ("target_id", "pin", "analog"),
    [("nrf52840", "P0.03", "AIN1"), ("stm32h743", "PA3", "ADC1_INP15"), ("stm32f407", "PA1", "ADC1_IN1")],
)
def test_board_default_adc_pin_is_an_analog_input_and_observable(target_id: str, pin: str, analog: str):
    target = load_target(target_id)
    assert target.board.adc_default_pin == pin
    assert analog in target.pins[pin].analog
    assert list(detail(target, "extra", "adc")["value"]["units"]) == list(target.adc.units if target.adc else ())
    assert detail(target, "pin", pin)["board_default_adc"] is True
    assert not any(detail(target, "pin", p)["board_default_adc"] for p in target.pins if p != pin)


def test_devicetree_labels_cover_gpio_ports_and_the_nrf_die_temperature_sensor():
    h7, f4, nrf = load_target("stm32h743"), load_target("stm32f407"), load_target("nrf52840")
    h7_ports = {p.lower() for p in h7.peripherals if p.startswith("GPIO")}
    assert h7_ports == {f"gpio{c}" for c in "abcdefghijk"} and h7_ports <= set(h7.board.dt_node_labels)
    assert {f"gpio{c}" for c in "abcdefghi"} <= set(f4.board.dt_node_labels)
    assert not {"gpioj", "gpiok"} & set(f4.board.dt_node_labels)  # F42x-only ports in the shared SVD
    assert {"gpio0", "gpio1", "temp"} <= set(nrf.board.dt_node_labels)
    for target in (h7, f4, nrf):  # the labels that were there before stay
        assert {"flash0", "sram0"} <= set(target.board.dt_node_labels)


@pytest.mark.parametrize(
    ("target_id", "pin", "signal", "label"),
    [
        ("stm32h743", "PA3", "ADC1_INP15", "adc1_inp15_pa3"),  # nucleo_h743zi.dts &adc1 pinctrl-0
        ("stm32h743", "PD8", "USART3_TX", "usart3_tx_pd8"),
        ("stm32h743", "PB8", "I2C1_SCL", "i2c1_scl_pb8"),
        ("stm32h743", "PA5", "SPI1_SCK", "spi1_sck_pa5"),
        ("stm32h743", "PB14", "TIM12_CH1", "tim12_ch1_pb14"),
        ("stm32f407", "PA1", "ADC1_IN1", "adc1_in1_pa1"),  # stm32f4_disco.dts &adc1 pinctrl-0
        ("stm32f407", "PB6", "I2C1_SCL", "i2c1_scl_pb6"),
        ("stm32f407", "PA9", "SPI1_SCK", None),  # PA9 cannot carry SPI1_SCK: no label
        ("nrf52840", "P0.03", "AIN1", None),  # nRF pinctrl is per-board groups: no derivation rule
    ],
)
def test_pinctrl_labels_are_derived_from_the_format_rule(target_id: str, pin: str, signal: str, label):
    assert load_target(target_id).pinctrl_label(pin, signal) == label


def test_svd_interrupts_belong_to_the_peripheral_they_name():
    from rac_fw.domains.firmware.facts.svd_import import _irq_owner

    names = {"USART1", "USART2", "USART3", "UART4", "TIM8", "TIM12", "RTC", "EXTI", "DMA1", "LPTIM4",
             "SPI0", "SPIM0", "TWIM0", "ADC1"}  # fmt: skip
    assert _irq_owner("USART3", "UART4", names) == "USART3"  # stm32-rs H743: IRQ 39 listed under UART4
    assert _irq_owner("USART1", "USART2", names) == "USART1"
    assert _irq_owner("TIM8_BRK_TIM12", "TIM12", names) == "TIM12"  # shared vector: its listed half keeps it
    assert _irq_owner("SPIM0_SPIS0_TWIM0_TWIS0_SPI0_TWI0", "TWIM0", names) == "TWIM0"
    assert _irq_owner("DMA1_STR0", "DMA1", names) == "DMA1"
    assert _irq_owner("RTC_ALARM", "EXTI", names) == "RTC"  # prefix names a peripheral
    assert _irq_owner("ADC1_2", "ADC12_Common", names) == "ADC1"
    assert _irq_owner("ETH_WKUP", "LPTIM4", names) == "LPTIM4"  # no ETH instance: the listing stands
    h7 = load_target("stm32h743")
    for name, number in (("USART1", 37), ("USART2", 38), ("USART3", 39), ("UART4", 52)):
        assert [(i.name, i.number) for i in h7.peripherals[name].interrupts] == [(name, number)]
    assert ("RTC_ALARM", 41) in {(i.name, i.number) for i in h7.peripherals["RTC"].interrupts}
    assert {i.number for i in h7.peripherals["DMA1"].interrupts} == {11, 12, 13, 14, 15, 16, 17, 47}


def test_f4_dma_request_table_is_in_the_pack():
    f4 = load_target("stm32f407")
    dma1, dma2 = f4.dma_controller("DMA1"), f4.dma_controller("DMA2")
    assert dma1 is not None and dma2 is not None
    assert dma1.routes("USART2_RX") == ((5, 4),) and dma2.routes("USART1_RX") == ((2, 4), (5, 4))
    assert dma2.routes("ADC1") == ((0, 0), (4, 0)) and dma1.routes("ADC1") == ()
    for controller in (dma1, dma2):
        for request, routes in controller.requests.items():
            assert request.split("_")[0] in controller.peripherals, request
            assert all(0 <= s < controller.channels and 0 <= c < 8 for s, c in routes), request
