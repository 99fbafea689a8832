"""Where each buffer lives, which DMA master touches it, and what cache care it needs.

This is the single place deciding buffer placement: lowerings (section attributes, Zephyr
``memory-region`` nodes), the bare-metal linker script and the ELF verifier's expectations all ask
:func:`placement` and :func:`buffer_needs`; the DMA obligations judge the same answers. It lives beside
``bind`` rather than in ``obligations``: it is a rule over the plan and the facts (both lowering and
judging need the same answer), not a judgement, so the lowerings import it without importing the
obligations. It is not in ``facts`` either, because it reads the plan (its buffers and DMA operations).

Rule: a DMA buffer goes to a RAM region (not flash/ROM/ITCM/backup) that both the CPU and its DMA
master reach; among those, a region the D-cache does not cover is preferred (no maintenance needed),
then the framework's default RAM (devicetree ``zephyr,sram``), then the largest, skipping regions the
plan's earlier buffers already filled. A plan may pin ``placement``; the obligations then check it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

from rac_fw.domains.firmware.facts.model import DmaController, MemoryRegion, Target
from rac_fw.domains.firmware.facts.query import (
    adc_unit_of,
    adc_units,
    dcache_active,
    request_instance,
    serving_controllers,
)
from rac_fw.domains.firmware.plan.channels import AdcPinChannel
from rac_fw.domains.firmware.plan.registry import spec

if TYPE_CHECKING:  # the buffer movers are told apart by their specs, so this module imports no op spec
    from rac_fw.domains.firmware.ops.adc.adc_scan import AdcScan
    from rac_fw.domains.firmware.ops.dma.dma_mem2mem import DmaMem2Mem
    from rac_fw.domains.firmware.ops.dma.dma_periph_rx import DmaPeriphRx
from rac_fw.domains.firmware.plan.model import Plan

#: Region kinds that never hold a data buffer.
NOT_BUFFER_RAM = frozenset({"flash", "rom", "itcm", "backup"})


def controller_named(target: Target, name: str) -> DmaController | None:
    """A DMA controller by its name or by its bus-master name (case-insensitive)."""
    key = name.lower()
    return next((c for c in target.dma if key in (c.name.lower(), c.master.lower())), None)


def _receives(op: Any) -> TypeGuard[DmaPeriphRx]:
    """A peripheral-to-memory DMA request (needs a DMA controller, names the requesting ``peripheral``)."""
    return spec(op.op).needs == "dma" and hasattr(op, "peripheral") and hasattr(op, "buffer")


def _copies(op: Any) -> TypeGuard[DmaMem2Mem]:
    """A memory-to-memory DMA copy (needs a DMA controller, moves ``src`` to ``dst``)."""
    return spec(op.op).needs == "dma" and hasattr(op, "src") and hasattr(op, "dst")


def _scans(op: Any) -> TypeGuard[AdcScan]:
    """An ADC operation that may scan into a ``buffer``."""
    return spec(op.op).needs == "adc" and hasattr(op, "buffer")


def scan_request(target: Target, op: AdcScan) -> str:
    """The ADC unit a scan converts with (from its first pin channel, else the first unit)."""
    for channel in op.channels:
        if isinstance(channel, AdcPinChannel):
            pin = target.pins.get(channel.pin)
            if pin is not None and pin.analog:
                return adc_unit_of(pin.analog[0])
    return (adc_units(target) or ("ADC",))[0]


def buffer_controller(plan: Plan, target: Target, name: str) -> DmaController | None:
    """The DMA controller that transfers into/out of buffer ``name`` (None: no DMA use or none fits)."""
    buffer = plan.buffer(name)
    if buffer is None:
        return None
    if buffer.dma is not None:
        return controller_named(target, buffer.dma)
    for op in plan.operations:
        if _receives(op) and op.buffer == name:
            if op.controller is not None:
                return controller_named(target, op.controller)
            return next(iter(serving_controllers(target, op.peripheral)), None)
        if _copies(op) and name in (op.src, op.dst):
            if op.controller is not None:
                return controller_named(target, op.controller)
            return next((c for c in target.dma if c.memory_to_memory), None)
        if _scans(op) and op.buffer == name:
            return next(iter(serving_controllers(target, scan_request(target, op))), None)
    return None


@dataclass(frozen=True)
class Transfer:
    """One DMA transfer a plan asks for: operation ``index`` moves data from ``source`` to ``sink`` (a
    request name such as ``USART2_RX`` or a buffer), started by ``request`` (None: a memory-to-memory copy
    the CPU starts), on ``controller`` (None: no controller serves it; the obligations say why)."""

    index: int
    source: str
    sink: str
    request: str | None
    controller: DmaController | None

    @property
    def direction(self) -> str:
        return "memory → memory" if self.request is None else "peripheral → memory"


def transfers(plan: Plan, target: Target) -> list[Transfer]:
    """Every DMA transfer of the plan, in operation order (what the report's DMA routes draw)."""
    found = []
    for index, op in enumerate(plan.operations):
        if _receives(op):
            found.append(Transfer(index, op.peripheral, op.buffer, op.peripheral,
                                  buffer_controller(plan, target, op.buffer)))
        elif _copies(op):
            found.append(Transfer(index, op.src, op.dst, None, buffer_controller(plan, target, op.src)))
        elif _scans(op) and op.buffer is not None:
            controller = buffer_controller(plan, target, op.buffer)
            if controller is not None:
                request = scan_request(target, op)
                found.append(Transfer(index, request, op.buffer, request, controller))
    return found


def receivers(plan: Plan, name: str) -> list[tuple[int, DmaPeriphRx]]:
    """The peripheral-to-memory requests (index, operation) that fill buffer ``name``."""
    return [(i, op) for i, op in enumerate(plan.operations) if _receives(op) and op.buffer == name]


def adc_fed(plan: Plan, name: str) -> bool:
    """Buffer ``name`` receives ADC samples (16-bit items on every supported chip at > 8-bit resolution)."""
    for op in plan.operations:
        if _receives(op) and op.buffer == name and "ADC" in request_instance(op.peripheral):
            return True
        if _scans(op) and op.buffer == name and op.resolution_bits > 8:
            return True
    return False


def default_ram(target: Target) -> MemoryRegion | None:
    """The region stacks, heap and ordinary data go to (devicetree ``zephyr,sram``, else largest SRAM)."""
    label = target.board.dt_chosen.get("zephyr,sram")
    chosen = next((r for r in target.memory if label and r.dt_label == label), None)
    if chosen is not None:
        return chosen
    rams = [r for r in target.memory if r.kind == "sram" and "cpu" in r.reachable_by]
    return max(rams, key=lambda r: r.size, default=None)


def buffer_regions(target: Target, master: str | None) -> list[MemoryRegion]:
    """RAM regions the CPU and ``master`` both reach, in placement preference order."""
    home = default_ram(target)
    regions = [
        r
        for r in target.memory
        if r.kind not in NOT_BUFFER_RAM and "cpu" in r.reachable_by and (master is None or master in r.reachable_by)
    ]
    return sorted(regions, key=lambda r: (r.cacheable, r is not home, -r.size))


def placement(plan: Plan, target: Target) -> dict[str, str]:
    """Buffer name → memory region name, for every buffer of the plan (deterministic)."""
    used: dict[str, int] = {}
    result: dict[str, str] = {}
    home = default_ram(target)
    for buffer in plan.resources.buffers:
        if buffer.placement is not None:
            region_name = buffer.placement
        elif buffer.role == "scratch":
            region_name = home.name if home else ""
        else:
            controller = buffer_controller(plan, target, buffer.name)
            candidates = buffer_regions(target, controller.master if controller else None)
            roomy = [r for r in candidates if r.size - used.get(r.name, 0) >= buffer.size_bytes]
            ranked = roomy or candidates
            region_name = ranked[0].name if ranked else ""
        if region_name:
            result[buffer.name] = region_name
            used[region_name] = used.get(region_name, 0) + buffer.size_bytes
    return result


@dataclass(frozen=True)
class BufferNeeds:
    """What a lowering must do for one buffer."""

    region: str
    """Region from :func:`placement`."""
    alignment_bytes: int
    """Required start alignment: the D-cache line on cached cores, else the DMA/element alignment."""
    cache_maintenance: bool
    """True when the region is D-cached under this framework: clean before a DMA read of the
    buffer, invalidate after a DMA write (or the lowering maps the region non-cacheable via the MPU)."""
    line_bytes: int | None
    """D-cache line size (maintenance granularity), None without a D-cache."""


def buffer_needs(plan: Plan, target: Target, framework: str, name: str) -> BufferNeeds | None:
    """Placement, alignment and cache maintenance for buffer ``name`` (None if no such buffer)."""
    buffer = plan.buffer(name)
    region_name = placement(plan, target).get(name)
    if buffer is None or region_name is None:
        return None
    region = target.region(region_name)
    controller = buffer_controller(plan, target, name)
    dcache = target.core.dcache
    alignment = max(4, buffer.element_bytes, controller.alignment_bytes if controller else 1)
    if dcache is not None and buffer.role != "scratch":
        alignment = max(alignment, dcache.line_bytes)
    maintenance = (
        buffer.role != "scratch" and region is not None and region.cacheable and dcache_active(target, framework)
    )
    return BufferNeeds(region_name, alignment, maintenance, dcache.line_bytes if dcache else None)
