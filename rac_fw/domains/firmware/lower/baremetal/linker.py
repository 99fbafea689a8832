"""Generate the GNU ld script from the memory facts and the DMA placement decided by the obligations.

The script never decides where a DMA buffer goes: ``placement`` does (one rule, one
place); this module only turns each chosen region into an output section ``.dma_<REGION>`` that
collects, each aligned, the buffers' own input sections (``.bss.rac_dma__<MASTER>__<buffer>`` under
``-fdata-sections``: the C needs no section attributes). These rules come before ``.bss`` so they win
the match. Any input section the script does not name is an orphan and, with
``--orphan-handling=error``, a link error.
"""

from __future__ import annotations

from dataclasses import dataclass

from rac_fw.domains.firmware.facts.model import MemoryRegion, Target
from rac_fw.domains.firmware.lower import template_env


@dataclass(frozen=True)
class DmaBufferLayout:
    """One DMA buffer as emitted: its plan name, master, region, padded size and alignment."""

    name: str
    master: str
    region: str
    size: int
    align: int

    @property
    def symbol(self) -> str:
        """``rac_dma__<MASTER>__<buffer>``: the convention the independent ELF verifier reads."""
        return f"rac_dma__{self.master}__{self.name}"

    @property
    def section(self) -> str:
        """The input section GCC gives the zero-initialised array under ``-fdata-sections``."""
        return f".bss.{self.symbol}"


def flash_region(target: Target) -> MemoryRegion:
    """The executable flash region holding the boot address (lowest flash region)."""
    flash = sorted((r for r in target.memory if r.kind == "flash" and r.executable), key=lambda r: r.address)
    if not flash:
        raise ValueError(f"{target.id} has no executable flash region in its facts")
    return flash[0]


def _attrs(region: MemoryRegion) -> str:
    if region.kind in ("flash", "rom"):
        return "rx"
    return "rwx" if region.executable else "rw"


def linker_script(
    target: Target, buffers: list[DmaBufferLayout], stack_bytes: int, heap_bytes: int, ram: str | None,
    noinit: bool = False,
) -> str:
    """The ``link.ld`` text for ``target`` with ``buffers`` already placed.

    ``ram`` is where .data, .bss, heap and stack go: ``placement.default_ram`` (the same
    region every framework uses as its default RAM). ``noinit`` adds the retained ``.noinit`` section
    (values a behaviour persists across a reset).
    """
    flash = flash_region(target)
    if ram is None:
        raise ValueError(f"{target.id} has no default RAM region in its facts")
    sections = []
    for region in target.memory:
        placed = [b for b in buffers if b.region == region.name]
        if placed:
            sections.append(
                {
                    "region": region.name,
                    "align": max(b.align for b in placed),
                    "masters": sorted({b.master for b in placed}),
                    "buffers": placed,
                }
            )
    regions = [
        {"name": r.name, "attrs": _attrs(r), "address": r.address, "size": r.size}
        for r in sorted(target.memory, key=lambda r: r.address)
    ]
    explicit = target.boot_address
    return (
        template_env("baremetal")
        .get_template("link.ld.j2")
        .render(
            target=target,
            regions=regions,
            flash=flash.name,
            ram=ram,
            boot_address=explicit if explicit is not None else flash.address,
            stack_bytes=stack_bytes,
            heap_bytes=heap_bytes,
            dma_sections=sections,
            noinit=noinit,
        )
    )
