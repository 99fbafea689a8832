"""Placement: the one rule deciding each buffer's region, alignment and cache maintenance, from facts."""

from __future__ import annotations

from typing import Any

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.obligations import buffer_controller, buffer_needs, placement
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.plan.model import Plan


def _plan(buffers: list[dict[str, Any]], *ops: dict[str, Any]) -> Plan:
    return parse_plan({"resources": {"buffers": buffers}, "operations": list(ops)})


M2M = {"op": "dma_mem2mem", "src": "src", "dst": "dst"}
PAIR = [{"name": "src", "size_bytes": 256, "role": "dma_mem"}, {"name": "dst", "size_bytes": 256, "role": "dma_mem"}]


def test_every_dma_buffer_lands_where_its_master_reaches() -> None:
    for target_id in ("stm32h743", "stm32f407", "esp32s3"):
        target = load_target(target_id)
        plan = _plan(PAIR, M2M)
        places = placement(plan, target)
        for name in ("src", "dst"):
            controller = buffer_controller(plan, target, name)
            assert controller is not None and controller.memory_to_memory
            region = target.region(places[name])
            assert region is not None and controller.master in region.reachable_by, (target_id, name, region)
            assert region.kind not in ("dtcm", "ccm", "flash", "itcm")


def test_stm32h743_prefers_the_default_ram_and_bdma_gets_sram4() -> None:
    target = load_target("stm32h743")
    plan = _plan(
        [*PAIR, {"name": "lp_rx", "size_bytes": 64, "role": "dma_rx", "dma": "BDMA"}],
        M2M,
        {"op": "dma_periph_rx", "peripheral": "LPUART1_RX", "buffer": "lp_rx"},
    )
    places = placement(plan, target)
    assert places["src"] == places["dst"] == "AXI_SRAM"  # zephyr,sram of the board, reachable by DMA1
    assert places["lp_rx"] == "SRAM4"  # the only RAM BDMA reaches


def test_pinned_placement_is_kept_for_the_obligations_to_judge() -> None:
    target = load_target("stm32f407")
    plan = _plan([{"name": "src", "size_bytes": 64, "role": "dma_mem", "placement": "CCM"}, PAIR[1]], M2M)
    assert placement(plan, target)["src"] == "CCM"


def test_cache_maintenance_and_alignment_follow_the_facts() -> None:
    h7 = load_target("stm32h743")
    plan = _plan(PAIR, M2M)
    zephyr = buffer_needs(plan, h7, "zephyr", "src")
    hal = buffer_needs(plan, h7, "hal", "src")
    bare = buffer_needs(plan, h7, "baremetal", "src")
    assert zephyr is not None and hal is not None and bare is not None
    line = h7.core.dcache.line_bytes if h7.core.dcache else 0
    assert zephyr.cache_maintenance and zephyr.alignment_bytes == line == zephyr.line_bytes
    # The HAL lowering enables the caches (extra.cache_enabled.hal); the bare-metal runtime does not.
    assert h7.cache_enabled == {"zephyr": True, "hal": True, "baremetal": False}
    assert hal.cache_maintenance and hal.alignment_bytes == line
    assert not bare.cache_maintenance and bare.alignment_bytes == line
    f4 = buffer_needs(plan, load_target("stm32f407"), "zephyr", "src")
    assert f4 is not None and not f4.cache_maintenance and f4.line_bytes is None and f4.alignment_bytes == 4
    esp = buffer_needs(plan, load_target("esp32s3"), "espidf", "src")
    assert esp is not None and not esp.cache_maintenance and esp.region in ("SRAM1", "SRAM2")


def test_buffers_fill_regions_in_order_and_spill_over() -> None:
    target = load_target("stm32h743")
    axi = target.region("AXI_SRAM")
    assert axi is not None
    big = [
        {"name": "a", "size_bytes": axi.size - 1024, "role": "dma_mem"},
        {"name": "b", "size_bytes": 4096, "role": "dma_mem"},
    ]
    places = placement(_plan(big, {"op": "dma_mem2mem", "src": "b", "dst": "a"}), target)
    assert places["a"] == "AXI_SRAM" and places["b"] != "AXI_SRAM"
