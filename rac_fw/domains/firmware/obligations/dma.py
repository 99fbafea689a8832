"""DMA obligations: reachability, memory-to-memory capability, transfer length, alignment, coherence.

E_DMA_UNREACHABLE: the buffer's region is not reachable by the DMA master that moves it (DTCM on
STM32H7 for DMA1/2, CCM on STM32F4, flash for nRF EasyDMA, non-DMA-capable RAM on ESP32-S3).
E_DMA_LENGTH: more items than one transfer can count. (A copy's own rules — a controller that cannot copy
memory to memory, a destination shorter than its source — are the ``dma_mem2mem`` spec's.)
E_DMA_ALIGNMENT: a length that is not a whole number of items, or items narrower than the samples.
E_CACHE_COHERENCE: a D-cached DMA buffer whose length is not a whole number of cache lines, so
maintenance by line would also clean/invalidate a neighbour's data.
"""

from __future__ import annotations

import math
import re

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.model import DmaController, MemoryRegion, Target
from rac_fw.domains.firmware.facts.query import request_instance, serving_controllers
from rac_fw.domains.firmware.placement import (
    NOT_BUFFER_RAM,
    adc_fed,
    buffer_controller,
    buffer_needs,
    buffer_regions,
    placement,
    receivers,
)
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.resources import Buffer


def _reachability(plan: Plan, target: Target, buffer: Buffer, index: int, controller: DmaController) -> list[Evidence]:
    region_name = placement(plan, target).get(buffer.name)
    region = target.region(region_name) if region_name else None
    if region is None:
        return []  # unknown region names are E_UNKNOWN_RESOURCE
    if controller.master in region.reachable_by and region.kind not in NOT_BUFFER_RAM:
        return []
    path: Path = ["resources", "buffers", index, "placement"]
    fits = [r for r in buffer_regions(target, controller.master) if r.size >= buffer.size_bytes]
    options = [
        relax(
            f"place {buffer.name} in {r.name} ({r.kind}{', cacheable' if r.cacheable else ''}, "
            f"reachable by {controller.name})",
            replace(path, r.name),
        )
        for r in fits
    ]
    options += _other_requests(plan, target, buffer, region)
    reach = ", ".join(r.name for r in fits) or "no RAM region"
    return [
        violation(
            "E_DMA_UNREACHABLE",
            f"buffer {buffer.name} is in {region.name} ({region.kind}), which {controller.name} (bus master "
            f"{controller.master}) cannot reach; it reaches {reach}",
            path,
            [buffer.name, region.name, controller.name],
            relaxations=options,
        )
    ]


def _kind(request: str) -> tuple[str, str]:
    """``LPUART1_RX`` → (``UART``, ``_RX``): requests of the same kind of peripheral and direction."""
    instance = request_instance(request)
    kind = re.sub(r"^LP|\d+$", "", instance).replace("USART", "UART")
    return kind, request[len(instance) :]


def _known_requests(target: Target) -> list[str]:
    """Every DMA request the facts route: multiplexer request lines and fixed stream mappings."""
    names = {r for mux in target.dmamux.values() for r in mux.requests}
    names |= {r for c in target.dma for r in c.requests}
    return sorted(names, key=lambda n: [int(t) if t.isdigit() else t for t in re.findall(r"\d+|\D+", n)])


def _other_requests(plan: Plan, target: Target, buffer: Buffer, region: MemoryRegion) -> list[Relaxation]:
    """For a buffer a peripheral receive fills: the same kind of peripheral on a DMA controller that
    reaches ``region`` (the buffer stays; the source moves), or dropping the transfer."""
    options: list[Relaxation] = []
    if buffer.dma is not None:
        return options
    for i, op in receivers(plan, buffer.name):
        if op.controller is not None:
            continue
        for request in _known_requests(target):
            serving = serving_controllers(target, request)
            if request == op.peripheral or _kind(request) != _kind(op.peripheral) or not serving:
                continue
            if serving[0].master in region.reachable_by and region.kind not in NOT_BUFFER_RAM:
                options.append(
                    relax(
                        f"receive from {request} instead ({serving[0].name} reaches {region.name})",
                        replace(["operations", i, "peripheral"], request),
                    )
                )
        options.append(relax(f"drop the {op.peripheral} transfer", remove(["operations", i])))
    return options


def _length_and_alignment(
    plan: Plan, target: Target, buffer: Buffer, index: int, controller: DmaController, framework: str
) -> list[Evidence]:
    found: list[Evidence] = []
    base: Path = ["resources", "buffers", index]
    size_path: Path = [*base, "size_bytes"]
    element = buffer.element_bytes
    if adc_fed(plan, buffer.name) and element < 2:
        even = buffer.size_bytes + buffer.size_bytes % 2
        found.append(
            violation(
                "E_DMA_ALIGNMENT",
                f"buffer {buffer.name} receives 16-bit ADC samples but has {element}-byte items",
                [*base, "element_bytes"],
                [buffer.name],
                [measure("element_bytes", element, "bytes"), measure("sample_bytes", 2, "bytes")],
                [
                    relax(
                        f"use 2-byte items ({even} bytes)",
                        replace([*base, "element_bytes"], 2),
                        replace(size_path, even),
                    )
                ],
            )
        )
        element = 2
    elif buffer.size_bytes % element:
        rounded = math.ceil(buffer.size_bytes / element) * element
        found.append(
            violation(
                "E_DMA_ALIGNMENT",
                f"buffer {buffer.name} is {buffer.size_bytes} bytes, not a whole number of {element}-byte items",
                size_path,
                [buffer.name],
                [measure("size", buffer.size_bytes, "bytes"), measure("item", element, "bytes")],
                [relax(f"make it {rounded} bytes", replace(size_path, rounded))],
            )
        )
    items = math.ceil(buffer.size_bytes / element)
    if items > controller.max_transfer_items:
        largest = controller.max_transfer_items * element
        found.append(
            violation(
                "E_DMA_LENGTH",
                f"buffer {buffer.name} needs {items} transfers of {element} bytes; {controller.name} "
                f"counts at most {controller.max_transfer_items}",
                size_path,
                [buffer.name, controller.name],
                [
                    measure("items", items, "items"),
                    measure("max_items", controller.max_transfer_items, "items"),
                    measure("excess", items - controller.max_transfer_items, "items"),
                ],
                [relax(f"shrink {buffer.name} to {largest} bytes", replace(size_path, largest))],
            )
        )
    needs = buffer_needs(plan, target, framework, buffer.name)
    if needs and needs.cache_maintenance and needs.line_bytes and buffer.size_bytes % needs.line_bytes:
        rounded = math.ceil(buffer.size_bytes / needs.line_bytes) * needs.line_bytes
        options = [
            relax(
                f"round {buffer.name} up to {rounded} bytes ({rounded // needs.line_bytes} cache lines)",
                replace(size_path, rounded),
            )
        ]
        options += [
            relax(f"place {buffer.name} in non-cacheable {r.name}", replace([*base, "placement"], r.name))
            for r in buffer_regions(target, controller.master)
            if not r.cacheable
        ]
        found.append(
            violation(
                "E_CACHE_COHERENCE",
                f"buffer {buffer.name} lies in D-cached {needs.region} and is {buffer.size_bytes} "
                f"bytes, not a multiple of the {needs.line_bytes}-byte cache line: invalidating it after DMA would "
                "also discard the neighbouring data sharing its last line",
                size_path,
                [buffer.name, needs.region],
                [
                    measure("size", buffer.size_bytes, "bytes"),
                    measure("cache_line", needs.line_bytes, "bytes"),
                    measure("padding_needed", rounded - buffer.size_bytes, "bytes"),
                ],
                options,
            )
        )
    return found


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Every DMA buffer against the controller and memory facts."""
    found: list[Evidence] = []
    for i, buffer in enumerate(plan.resources.buffers):
        if buffer.role == "scratch":
            continue
        controller = buffer_controller(plan, target, buffer.name)
        if controller is None:
            continue
        found += _reachability(plan, target, buffer, i, controller)
        found += _length_and_alignment(plan, target, buffer, i, controller, framework)
    return found
