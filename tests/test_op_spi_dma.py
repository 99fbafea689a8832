"""SPI with DMA (issue 13 item 6): ``spi_transfer`` ``dma: true`` on Zephyr STM32.

The SPI node's ``dmas``/``dma-names`` come from the chip's DMA request facts (RM0090 fixed stream/channel
mapping on the F407, DMAMUX1 request lines on the H743) through the devicetree block's allocator, so the
streams a devicetree ``dmas`` entry takes are never handed to the SPI controller; prj.conf enables
``CONFIG_SPI_STM32_DMA``. Every E_SPI_DMA refusal offers "drop dma", and applying it validates.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.obligations import CODES, check
from rac_fw.domains.firmware.ops.bus.spi_transfer import spi_dma
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.verify.config import parse_kconfig
from rac_fw.resources import data_dir

H7_OVERLAY = "boards/nucleo_h743zi.overlay"


def _plan(target: str, framework: str, controller: str, cs: str, **top: Any) -> dict[str, Any]:
    return {
        "target": target,
        "framework": framework,
        "resources": {
            "devices": [
                {"name": "flash", "bus": "spi", "controller": controller, "chip_select": cs, "frequency_hz": 8000000}
            ]  # fmt: skip
        },
        "operations": [
            {
                "op": "spi_transfer",
                "name": "jedec",
                "device": "flash",
                "register_index": 0x9F,
                "read_bytes": 3,
                "dma": True,
            }
        ],  # fmt: skip
        **top,
    }


def test_h743_overlay_takes_the_dmamux_lines_and_prj_conf_enables_spi_dma() -> None:
    """RM0433 Table 121: SPI1_TX is DMAMUX1 request 38, SPI1_RX 37, on distinct DMA1 streams."""
    plan = load_plan(data_dir("examples") / "spi_dma.yaml")
    assert run_plan(plan).status is Status.PASS
    files = lower(plan, load_target("stm32h743"), "zephyr").files
    overlay = files[H7_OVERLAY]
    assert "dmas = <&dmamux1 6 38 STM32_DMA_PERIPH_TX>, <&dmamux1 5 37 STM32_DMA_PERIPH_RX>;" in overlay
    assert 'dma-names = "tx", "rx";' in overlay and "&dmamux1 {" in overlay and "&dma1 {" in overlay
    kconfig = parse_kconfig(files["prj.conf"])
    assert kconfig.get("SPI_STM32_DMA") == "y" and kconfig.get("DMA") == "y"
    # The H7 core is D-cached and the driver refuses cacheable DMA buffers: both buffers are __nocache.
    assert kconfig.get("NOCACHE_MEMORY") == "y"
    main = files["src/main.c"]
    assert "app_jedec_tx[4] __nocache;" in main and "app_jedec_rx[4] __nocache;" in main
    assert "app_jedec_tx[0] = 0x9f;" in main and "#include <zephyr/linker/section_tags.h>" in main


def test_without_dma_the_transfer_is_unchanged() -> None:
    data = _plan("stm32h743", "zephyr", "SPI1", "PD14")
    data["operations"][0]["dma"] = False
    files = lower(parse_plan(data), load_target("stm32h743"), "zephyr").files
    assert "dmas" not in files[H7_OVERLAY] and "CONFIG_SPI_STM32_DMA" not in files["prj.conf"]
    assert "__nocache" not in files["src/main.c"]


def test_h743_spi_streams_avoid_the_devicetree_blocks_streams() -> None:
    """A devicetree ``dmas`` entry claims its stream first; the SPI controller gets the next free ones."""
    data = _plan("stm32h743", "zephyr", "SPI1", "PD14", devicetree={
        "pinctrl": [{"peripheral": "USART2", "pins": {"tx": "PD5", "rx": "PD6"}}],
        "dmas": [{"peripheral": "USART2", "direction": "rx"}]})  # fmt: skip
    assert run_plan(copy.deepcopy(data)).status is Status.PASS
    overlay = lower(parse_plan(data), load_target("stm32h743"), "zephyr").files[H7_OVERLAY]
    assert "dmas = <&dmamux1 6 43 STM32_DMA_PERIPH_RX>;" in overlay
    assert "dmas = <&dmamux1 5 38 STM32_DMA_PERIPH_TX>, <&dmamux1 4 37 STM32_DMA_PERIPH_RX>;" in overlay


def test_f407_routes_follow_the_rm0090_mapping() -> None:
    """RM0090 Table 43: SPI1_TX is DMA2 stream 3 (or 5) channel 3, SPI1_RX stream 0 (or 2) channel 3."""
    target = load_target("stm32f407")
    found = spi_dma(parse_plan(_plan("stm32f407", "zephyr", "SPI1", "PE3")), target)["SPI1"]
    assert found.problem is None and found.routes is not None
    tx, rx = found.routes
    assert tx.cells == "<&dma2 3 3 STM32_DMA_PERIPH_TX STM32_DMA_FIFO_FULL>"
    assert rx.cells == "<&dma2 0 3 STM32_DMA_PERIPH_RX STM32_DMA_FIFO_FULL>"


def _seeded() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        ("not-zephyr", "stm32h743", _plan("stm32h743", "hal", "SPI1", "PD14")),
        ("no-dma-request", "nrf52840", _plan("nrf52840", "zephyr", "SPIM1", "P1.12")),
        ("spi-listed-in-devicetree", "stm32h743", _plan("stm32h743", "zephyr", "SPI1", "PD14", devicetree={
            "pinctrl": [{"peripheral": "USART2", "pins": {"tx": "PD5", "rx": "PD6"}}],
            "dmas": [{"peripheral": "USART2", "direction": "rx"}, {"peripheral": "SPI1", "direction": "tx"}]})),
        # RM0090 Table 42: SPI3_TX rides DMA1 stream 5 or 7; USART2_RX (5) and UART5_TX (7) claim both first.
        ("stream-taken", "stm32f407", _plan("stm32f407", "zephyr", "SPI3", "PE3", devicetree={
            "dmas": [{"peripheral": "USART2", "direction": "rx"}, {"peripheral": "UART5", "direction": "tx"}]})),
    ]  # fmt: skip


@pytest.mark.parametrize(("case", "target", "data"), _seeded(), ids=[c for c, _, _ in _seeded()])
def test_seeded_e_spi_dma_and_every_relaxation_validates(case: str, target: str, data: dict[str, Any]) -> None:
    assert "E_SPI_DMA" in CODES
    facts = load_target(target)
    found = [e for e in check(parse_plan(data), facts) if e.code == "E_SPI_DMA"]
    assert found, case
    hit = found[0]
    assert hit.location == "operations[0].dma" and "flash" in hit.objects and hit.message
    assert hit.relaxations
    for relaxation in hit.relaxations:
        assert relaxation.description == "drop dma"
        after = check(parse_plan(apply_patch(copy.deepcopy(data), relaxation.patch)), facts)
        assert not [e for e in after if e.code == "E_SPI_DMA"]
        if case != "stream-taken":  # the F407 Zephyr board enables no SPI node: the plan is refused elsewhere
            assert after == [], [(e.code, e.location, e.message) for e in after]
