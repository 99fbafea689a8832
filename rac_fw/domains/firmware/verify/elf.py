"""Judge a linked firmware ELF against the target's facts, independently of whoever produced it.

This module reads only the ELF (pyelftools) and the target facts; it never imports the lowering, the
linker-script generator or a receipt, so a bug there cannot hide here. It checks:

- **DMA reachability**: every DMA buffer symbol lies entirely inside a memory region its DMA master
  can reach (``MemoryRegion.reachable_by``), aligned to the D-cache line (where the core has a D-cache,
  also a whole number of lines long) and to the controller's own alignment.
- **Section fit**: every allocated section lies inside one memory region, at its run address (VMA) and
  at its load address (LMA, from the program headers).
- **Boot**: the vector table sits at the boot address (first word: an initial stack pointer inside RAM
  the CPU reaches, 8-byte aligned; second word: a Thumb reset vector pointing into executable flash).

DMA buffers are recognised by a naming convention any producer can follow (documented in
``docs/ARCHITECTURE.md``): an object symbol ``rac_dma__<MASTER>__<buffer>``, where ``<MASTER>`` is the
DMA controller or bus master name from the facts (e.g. ``DMA2``, ``BDMA``). Only the symbol name is
trusted for *which* master; the address and size come from the symbol table.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from rac_fw.contract import Evidence, Magnitude, Relaxation, Verdict
from rac_fw.domain import Verification
from rac_fw.domains.firmware.facts.model import MemoryRegion, Target

#: ``rac_dma__<MASTER>__<buffer>``: the DMA-buffer symbol convention (master, then plan buffer name).
DMA_SYMBOL = re.compile(r"^rac_dma__(?P<master>[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*?)__(?P<buffer>[a-z][a-z0-9_]*)$")


@dataclass(frozen=True)
class DmaBuffer:
    """A DMA buffer as the ELF shows it."""

    symbol: str
    master: str
    buffer: str
    address: int
    size: int


@dataclass(frozen=True)
class SectionSpan:
    """An allocated section's run (VMA) and load (LMA) ranges."""

    name: str
    vma: int
    lma: int
    size: int
    nobits: bool


def _hex(value: int) -> str:
    return f"0x{value:08x}"


def _region_name(region: MemoryRegion | None) -> str:
    return region.name if region else "no region"


def _sections(elf: ELFFile) -> list[SectionSpan]:
    """Allocated, non-empty sections with their LMA (from the PT_LOAD segment that holds them)."""
    loads = [seg for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"]
    spans: list[SectionSpan] = []
    for section in elf.iter_sections():
        if not section["sh_flags"] & SH_FLAGS.SHF_ALLOC or section["sh_size"] == 0:
            continue
        vma, size = section["sh_addr"], section["sh_size"]
        lma = vma
        for seg in loads:
            if seg["p_vaddr"] <= vma < seg["p_vaddr"] + max(seg["p_memsz"], 1):
                lma = seg["p_paddr"] + (vma - seg["p_vaddr"])
                break
        spans.append(SectionSpan(section.name, vma, lma, size, section["sh_type"] == "SHT_NOBITS"))
    return spans


def dma_buffers(elf: ELFFile) -> list[DmaBuffer]:
    """Every symbol following the ``rac_dma__<MASTER>__<buffer>`` convention."""
    symtab = elf.get_section_by_name(".symtab")
    if symtab is None:
        return []
    found: list[DmaBuffer] = []
    for symbol in symtab.iter_symbols():  # type: ignore[attr-defined]
        match = DMA_SYMBOL.match(symbol.name)
        if match and symbol["st_info"]["type"] == "STT_OBJECT":
            found.append(
                DmaBuffer(symbol.name, match["master"], match["buffer"], symbol["st_value"], symbol["st_size"])
            )
    return sorted(found, key=lambda b: b.symbol)


def _read_word(elf: ELFFile, address: int) -> int | None:
    """The 32-bit word the image loads at physical ``address`` (None when nothing is loaded there)."""
    for seg in elf.iter_segments():
        if seg["p_type"] == "PT_LOAD" and seg["p_paddr"] <= address and address + 4 <= seg["p_paddr"] + seg["p_filesz"]:
            data = seg.data()[address - seg["p_paddr"] : address - seg["p_paddr"] + 4]
            return int(struct.unpack("<I", data)[0])
    return None


def boot_address(target: Target) -> int:
    """Where the core fetches its vector table after reset: ``Target.boot_address`` or the first flash."""
    if target.boot_address is not None:
        return target.boot_address
    flash = [r for r in target.memory if r.kind == "flash"]
    return min(r.address for r in flash) if flash else 0


def _check_dma(target: Target, buffers: list[DmaBuffer]) -> tuple[list[Verdict], list[Evidence]]:
    verdicts: list[Verdict] = []
    evidence: list[Evidence] = []
    masters = {m.name for m in target.bus_masters} | {d.name for d in target.dma}
    dcache = target.core.dcache
    for buf in buffers:
        controller = target.dma_controller(buf.master)
        master = controller.master if controller else buf.master
        region = target.region_at(buf.address)
        inside = region is not None and region.contains(buf.address, max(buf.size, 1))
        reachable = [r.name for r in target.regions_reachable_by(master)]
        if buf.master not in masters:
            evidence.append(
                Evidence(
                    code="E_DMA_MASTER_UNKNOWN",
                    message=f"{buf.symbol} names DMA master {buf.master!r}, which the {target.id} facts do "
                    f"not have (known: {', '.join(sorted(masters))})",
                    objects=[buf.symbol, buf.master],
                )
            )
            verdicts.append(Verdict(predicate=f"{buf.symbol} has a known DMA master", passed=False))
            continue
        ok = inside and region is not None and master in region.reachable_by
        verdicts.append(
            Verdict(
                predicate=f"{buf.symbol} lies in a region {buf.master} can reach",
                passed=ok,
                measured=f"{_hex(buf.address)} ({_region_name(region)})",
                limit=", ".join(reachable),
                detail=f"{buf.size} bytes",
            )
        )
        if not ok:
            evidence.append(
                Evidence(
                    code="E_ELF_DMA_UNREACHABLE",
                    message=f"DMA buffer {buf.symbol} at {_hex(buf.address)} ({buf.size} bytes) lies in "
                    f"{_region_name(region)}, which {buf.master} (bus master {master}) cannot reach; "
                    f"reachable: {', '.join(reachable) or 'none'}",
                    location=buf.symbol,
                    objects=[buf.symbol, buf.buffer, buf.master, _region_name(region)],
                    magnitudes=[
                        Magnitude(name="address", value=buf.address, unit="address"),
                        Magnitude(name="size", value=buf.size, unit="bytes"),
                    ],
                    relaxations=[
                        Relaxation(description=f"place {buf.buffer} in {name} (resources.buffers placement)")
                        for name in reachable
                        if name in {r.name for r in target.memory if r.kind != "flash"}
                    ],
                )
            )
        needed = max(controller.alignment_bytes if controller else 1, dcache.line_bytes if dcache else 1)
        size_ok = dcache is None or buf.size % dcache.line_bytes == 0
        aligned = buf.address % needed == 0 and size_ok
        verdicts.append(
            Verdict(
                predicate=f"{buf.symbol} is aligned to {needed} bytes"
                + (f" and a whole number of {dcache.line_bytes}-byte cache lines" if dcache else ""),
                passed=aligned,
                measured=f"{_hex(buf.address)}, {buf.size} bytes",
                limit=needed,
                unit="bytes",
            )
        )
        if not aligned:
            evidence.append(
                Evidence(
                    code="E_ELF_DMA_ALIGNMENT",
                    message=f"DMA buffer {buf.symbol} at {_hex(buf.address)} ({buf.size} bytes) must start "
                    f"on a {needed}-byte boundary"
                    + (f" and span whole {dcache.line_bytes}-byte D-cache lines" if dcache else "")
                    + " so cache maintenance cannot corrupt neighbouring data",
                    location=buf.symbol,
                    objects=[buf.symbol, buf.buffer],
                    magnitudes=[
                        Magnitude(name="misalignment", value=buf.address % needed, unit="bytes"),
                        Magnitude(name="size", value=buf.size, unit="bytes"),
                    ],
                )
            )
    return verdicts, evidence


def _check_sections(target: Target, spans: list[SectionSpan]) -> tuple[list[Verdict], list[Evidence]]:
    verdicts: list[Verdict] = []
    evidence: list[Evidence] = []
    for span in spans:
        addresses = [("run", span.vma)] + ([("load", span.lma)] if not span.nobits and span.lma != span.vma else [])
        for what, address in addresses:
            region = target.region_at(address)
            ok = region is not None and region.contains(address, span.size)
            verdicts.append(
                Verdict(
                    predicate=f"section {span.name} ({what}) fits one memory region",
                    passed=ok,
                    measured=f"{_hex(address)}+{span.size}",
                    limit=f"{region.name} {_hex(region.address)}..{_hex(region.end)}" if region else None,
                )
            )
            if not ok:
                overflow = address + span.size - region.end if region else span.size
                evidence.append(
                    Evidence(
                        code="E_ELF_SECTION_OUTSIDE_REGION",
                        message=f"section {span.name} {what} address {_hex(address)} ({span.size} bytes) "
                        + (
                            f"overruns {region.name} (ends {_hex(region.end)}) by {overflow} bytes"
                            if region
                            else "is in no memory region of the target"
                        ),
                        location=span.name,
                        objects=[span.name, _region_name(region)],
                        magnitudes=[Magnitude(name="overflow", value=overflow, unit="bytes")],
                    )
                )
    return verdicts, evidence


def _check_boot(target: Target, elf: ELFFile) -> tuple[list[Verdict], list[Evidence]]:
    base = boot_address(target)
    sp, reset = _read_word(elf, base), _read_word(elf, base + 4)
    verdicts: list[Verdict] = []
    evidence: list[Evidence] = []
    sp_region = target.region_at(sp - 4) if sp is not None else None
    sp_ok = (
        sp is not None
        and sp % 8 == 0
        and sp_region is not None
        and sp_region.kind != "flash"
        and "cpu" in sp_region.reachable_by
    )
    reset_region = target.region_at(reset & ~1) if reset is not None else None
    reset_ok = reset is not None and reset & 1 == 1 and reset_region is not None and reset_region.kind == "flash"
    verdicts.append(
        Verdict(
            predicate=f"vector table at boot address {_hex(base)}: initial SP in CPU RAM, 8-byte aligned",
            passed=sp_ok,
            measured=_hex(sp) if sp is not None else "nothing loaded",
            limit=_region_name(sp_region),
        )
    )
    verdicts.append(
        Verdict(
            predicate="reset vector is a Thumb address in flash",
            passed=reset_ok,
            measured=_hex(reset) if reset is not None else "nothing loaded",
            limit=_region_name(reset_region),
        )
    )
    if not sp_ok:
        evidence.append(
            Evidence(
                code="E_ELF_VECTOR_TABLE",
                message=f"no valid initial stack pointer at boot address {_hex(base)} (found "
                f"{_hex(sp) if sp is not None else 'nothing loaded'}, region {_region_name(sp_region)}); "
                "the vector table must be the first thing in flash",
                objects=["vector_table", _hex(base)],
            )
        )
    if not reset_ok:
        evidence.append(
            Evidence(
                code="E_ELF_RESET_VECTOR",
                message=f"reset vector {_hex(reset) if reset is not None else 'missing'} at {_hex(base + 4)} "
                f"is not a Thumb (odd) address in flash (region {_region_name(reset_region)})",
                objects=["Reset_Handler", _region_name(reset_region)],
            )
        )
    return verdicts, evidence


def verify_elf(path: Path | str, target: Target) -> Verification:
    """All ELF checks for ``path`` against ``target``; never raises on a bad image, only on a missing file."""
    with open(path, "rb") as handle:
        elf = ELFFile(handle)
        verdicts: list[Verdict] = []
        evidence: list[Evidence] = []
        for check in (
            _check_boot(target, elf),
            _check_sections(target, _sections(elf)),
            _check_dma(target, dma_buffers(elf)),
        ):
            verdicts += check[0]
            evidence += check[1]
    return Verification(verdicts=verdicts, evidence=evidence)
