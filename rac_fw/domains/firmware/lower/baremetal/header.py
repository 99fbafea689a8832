"""Generate a C device header from the SVD-derived facts: register structs, instances, IRQn, fields.

One ``typedef struct`` per register *layout* (an SVD peripheral that is not ``derivedFrom`` another),
with reserved gaps padding each register to its SVD offset, so ``offsetof`` equals the SVD offset —
tests check exactly that with ``_Static_assert``. Registers sharing an offset (timer capture/compare
input/output views) become an anonymous union. Array registers (``PIN_CNF[0]``…) fold into a C array
when their elements are contiguous. Every instance gets a base-address pointer macro; each field gets
``<LAYOUT>_<REG>_<FIELD>_Pos`` / ``_Msk`` macros.

Core peripherals in the System Control Space (SysTick, NVIC, SCB at 0xE000E000–0xE000EFFF) are left to
``templates/baremetal/armv7m.h``: they are defined by the ARMv7-M architecture, identical on every
Cortex-M3/M4/M7, and missing from some vendors' SVDs (Nordic's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rac_fw.domains.firmware.facts.load import interrupts, peripheral
from rac_fw.domains.firmware.facts.model import Peripheral, Register, Target

#: The ARMv7-M System Control Space; peripherals here come from ``armv7m.h``, not the SVD.
SCS_START, SCS_END = 0xE000E000, 0xE000F000

_ARRAY = re.compile(r"^(?P<base>\w+)\[(?P<index>\d+)\]$")
_NOT_IDENT = re.compile(r"\W")


def c_ident(name: str) -> str:
    """An SVD name as a C identifier: ``RAM[0]_POWER`` → ``RAM0_POWER``, leading digit → ``_``."""
    ident = _NOT_IDENT.sub("", name.replace("[", "").replace("]", "")) if "[" in name else _NOT_IDENT.sub("_", name)
    return f"_{ident}" if ident[:1].isdigit() else ident


def _ctype(bits: int) -> str:
    return {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}.get(bits, "uint32_t")


@dataclass(frozen=True)
class Member:
    """One struct member: a register, or a folded register array (``count`` > 1)."""

    name: str
    offset: int
    size_bits: int
    count: int
    registers: tuple[Register, ...]

    @property
    def end(self) -> int:
        return self.offset + self.count * self.size_bits // 8


def _fold_arrays(registers: tuple[Register, ...]) -> list[Member]:
    """Fold contiguous ``NAME[i]`` registers (same size, i = 0..n-1) into one array member."""
    members: list[Member] = []
    groups: dict[str, list[Register]] = {}
    for reg in registers:
        match = _ARRAY.match(reg.name)
        if match:
            groups.setdefault(match["base"], []).append(reg)
    folded: set[str] = set()
    for base, regs in groups.items():
        regs.sort(key=lambda r: int(_ARRAY.match(r.name)["index"]))  # type: ignore[index]
        step = regs[0].size_bits // 8
        contiguous = all(
            int(_ARRAY.match(r.name)["index"]) == i  # type: ignore[index]
            and r.offset == regs[0].offset + i * step
            and r.size_bits == regs[0].size_bits
            for i, r in enumerate(regs)
        )
        if contiguous:
            members.append(Member(c_ident(base), regs[0].offset, regs[0].size_bits, len(regs), tuple(regs)))
            folded.update(r.name for r in regs)
    for reg in registers:
        if reg.name not in folded:
            members.append(Member(c_ident(reg.name), reg.offset, reg.size_bits, 1, (reg,)))
    return sorted(members, key=lambda m: (m.offset, -m.end, m.name))


def _member_decl(member: Member, lead: int = 0) -> str:
    array = f"[{member.count}]" if member.count > 1 else ""
    decl = f"volatile {_ctype(member.size_bits)} {member.name}{array};"
    if lead:
        return f"struct {{ uint8_t RESERVED_{member.name}[{lead}]; {decl} }};"
    return decl


def struct_body(registers: tuple[Register, ...]) -> list[str]:
    """Struct member lines with reserved gaps; overlapping registers become an anonymous union."""
    lines: list[str] = []
    cursor = 0
    members = _fold_arrays(registers)
    index = 0
    gap = 0
    while index < len(members):
        first = members[index]
        cluster = [first]
        end = first.end
        index += 1
        while index < len(members) and members[index].offset < end:
            cluster.append(members[index])
            end = max(end, members[index].end)
            index += 1
        if first.offset > cursor:
            lines.append(f"    uint8_t RESERVED{gap}[{first.offset - cursor}];")
            gap += 1
        if len(cluster) == 1:
            lines.append(f"    {_member_decl(first)} /* 0x{first.offset:03X} */")
        else:
            lines.append(f"    union {{ /* 0x{first.offset:03X} */")
            lines += [f"        {_member_decl(m, m.offset - first.offset)}" for m in cluster]
            lines.append("    };")
        cursor = end
    return lines


def _field_macros(layout: str, registers: tuple[Register, ...]) -> list[str]:
    lines: list[str] = []
    seen: set[str] = set()
    for reg in registers:
        match = _ARRAY.match(reg.name)
        reg_name = c_ident(match["base"]) if match else c_ident(reg.name)
        for fld in reg.fields:
            stem = f"{layout}_{reg_name}_{c_ident(fld.name)}"
            if stem in seen:
                continue
            seen.add(stem)
            mask = ((1 << fld.width) - 1) << fld.lsb
            lines.append(f"#define {stem}_Pos {fld.lsb}U")
            lines.append(f"#define {stem}_Msk 0x{mask:08X}UL")
    return lines


def layout_name(target: Target, instance: str) -> str:
    """The layout (struct and macro prefix) an instance uses: its ``derivedFrom`` base, else itself."""
    found = target.peripherals[instance]
    return c_ident(found.derived_from or found.name)


def _in_scs(p: Peripheral) -> bool:
    return SCS_START <= p.base < SCS_END


def device_header(target: Target) -> str:
    """The complete ``<target>.h`` text (deterministic; includes ``armv7m.h`` for the core)."""
    guard = f"RAC_DEVICE_{c_ident(target.id).upper()}_H"
    out = [
        f"/* Device header for {target.name} ({target.svd_device}), generated by rac-fw from the",
        f" * SVD-derived facts in targets/{target.id}/svd.json. Do not edit: regenerate. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "#include <stdint.h>",
        "",
        "typedef enum {",
        "    Reset_IRQn = -15, NonMaskableInt_IRQn = -14, HardFault_IRQn = -13, MemoryManagement_IRQn = -12,",
        "    BusFault_IRQn = -11, UsageFault_IRQn = -10, SVCall_IRQn = -5, DebugMonitor_IRQn = -4,",
        "    PendSV_IRQn = -2, SysTick_IRQn = -1,",
    ]
    out += [f"    {c_ident(name)}_IRQn = {number}," for number, name, _ in interrupts(target.id)]
    out += ["} IRQn_Type;", "", f"#define RAC_IRQ_COUNT {target.irq_count}U", ""]
    instances = sorted((p for p in target.peripherals.values() if not _in_scs(p)), key=lambda p: p.base)
    layouts: dict[str, Peripheral] = {}
    for inst in instances:
        if inst.derived_from is None:
            full = peripheral(target.id, inst.name)
            if full.registers:
                layouts[c_ident(inst.name)] = full
    for layout, full in sorted(layouts.items()):
        out.append(f"typedef struct {{ /* {full.group} */")
        out += struct_body(full.registers)
        out.append(f"}} {layout}_Type;")
        out += _field_macros(layout, full.registers)
        out.append("")
    for inst in instances:
        layout = c_ident(inst.derived_from or inst.name)
        name = c_ident(inst.name)
        out.append(f"#define {name}_BASE 0x{inst.base:08X}UL")
        if layout in layouts:
            out.append(f"#define {name} ((volatile {layout}_Type *){name}_BASE)")
    out += ["", "#endif", ""]
    return "\n".join(out)
