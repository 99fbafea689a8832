"""Derive a target's compact ``svd.json`` from a CMSIS-SVD file (the only place an SVD is parsed).

Parsing an SVD with ``cmsis-svd`` takes about a second, so it happens once, at import time, on a
developer's machine; the committed ``svd.json`` is what run time loads. The file keeps:

- ``device``: name, vendor, SVD version and the CPU block (core, FPU, MPU, NVIC priority bits);
- ``interrupts``: the complete device interrupt list (``[number, name, [peripherals…]]``, sorted by
  number), so vector tables and device headers can be generated from it (interrupts an SVD lists under
  the wrong instance are attributed to the right one, see :func:`_irq_owner`);
- ``peripherals``: every instance (group, base, address-block size, ``derivedFrom``, its IRQs);
- ``registers``: registers and fields for the groups the backends program (:data:`REGISTER_GROUPS`),
  stored once per layout: an instance ``derivedFrom`` another has no entry of its own.

Register rows are arrays ``[name, offset, size_bits, reset, access, [[field, lsb, width], …]]`` to keep
the file small; integers stay integers. Output is deterministic (sorted keys, one peripheral per line).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

#: Bump when the JSON shape changes; the loader refuses files of another format.
SVD_JSON_FORMAT = 1

#: Peripheral groups whose registers the backends (bare-metal headers, HAL/Zephyr checks) need.
#: Matched against the SVD group name and the instance name without its trailing digits.
REGISTER_GROUPS = frozenset(
    {
        # STM32
        "RCC",
        "GPIO",
        "USART",
        "UART",
        "LPUART",
        "TIM",
        "ADC",
        "ADC_COMMON",
        "ADC_Common",
        "DMA",
        "BDMA",
        "DMAMUX",
        "IWDG",
        "WWDG",
        "FLASH",
        "PWR",
        "RTC",
        "STK",
        "SYSCFG",
        "EXTI",
        "SPI",
        "I2C",
        "NVIC",
        "SCB",
        "MPU",
        "FPU",
        # STM32 and nRF52: the true random number generator (bare-metal ``random``)
        "RNG",
        # nRF52
        "UARTE",
        "TIMER",
        "SAADC",
        "WDT",
        "NVMC",
        "POWER",
        "CLOCK",
        "GPIOTE",
        "SPIM",
        "TWIM",
        "PWM",
        "P0",
        "P1",
        "RTC0",
        # ESP32-S3
        "UART0",
        "GDMA",
        "TIMG",
        "LEDC",
        "APB_SARADC",
        "SENS",
        "RTC_CNTL",
        "SYSTEM",
        "SYSTIMER",
        "IO_MUX",
        "GPIO_SD",
        "INTERRUPT_CORE0",
        "I2C0",
        "SPI2",
        "MCPWM",
    }
)

_TRAILING_DIGITS = re.compile(r"\d+$")


class SvdImportError(RuntimeError):
    """The SVD could not be found or read; the message says where and what to do."""


def _wants_registers(name: str, group: str) -> bool:
    return group in REGISTER_GROUPS or name in REGISTER_GROUPS or _TRAILING_DIGITS.sub("", name) in REGISTER_GROUPS


def _enum_value(value: Any) -> Any:
    return getattr(value, "value", value)


def _flat_registers(items: Iterable[Any] | None) -> Iterator[Any]:
    """Yield plain registers from a mix of registers, register arrays and (nested) clusters."""
    for item in items or ():
        if hasattr(item, "meta_register"):  # SVDRegisterArray: already expanded by cmsis-svd
            yield from item.registers
        elif hasattr(item, "meta_cluster"):  # SVDRegisterClusterArray: expanded clusters
            yield from _flat_registers(item.clusters)
        elif hasattr(item, "clusters"):  # SVDRegisterCluster: offsets are already absolute
            yield from _flat_registers(item.registers)
            yield from _flat_registers(item.clusters)
        elif hasattr(item, "address_offset"):
            yield item


def _register_row(register: Any, default_size: int, default_access: str) -> list[Any]:
    fields = sorted(
        ([f.name, int(f.bit_offset), int(f.bit_width)] for f in (register.fields or ())),
        key=lambda row: (row[1], row[0]),
    )
    access = _enum_value(register.access) or default_access
    return [
        register.name,
        int(register.address_offset),
        int(register.size or default_size),
        int(register.reset_value or 0),
        access,
        fields,
    ]


def _irq_owner(interrupt: str, listed_under: str, names: set[str]) -> str:
    """The peripheral an interrupt belongs to, given the one the SVD lists it under.

    Vendor SVDs sometimes attach an interrupt to a neighbouring element (the stm32-rs STM32H743 SVD
    lists USART3's IRQ 39 under UART4 and USART1's under USART2; RTC_ALARM under EXTI). Rule, in order:
    an interrupt named exactly like an instance belongs to it; one whose ``_``-separated name contains
    the listing instance stays there (``TIM8_BRK_TIM12`` under TIM12, ``SPIM0_SPIS0_…_TWI0`` under each
    of its instances, ``DMA1_STR0`` under DMA1); otherwise an instance named by the name's first part
    (``RTC_ALARM`` → RTC, ``ADC1_2`` → ADC1) takes it; else the SVD's listing stands. Vector numbers
    never change.
    """
    if interrupt in names:
        return interrupt
    parts = interrupt.split("_")
    if listed_under in parts:
        return listed_under
    return parts[0] if parts[0] in names else listed_under


def _irq_owners(peripherals: Iterable[Any]) -> dict[str, set[tuple[int, str]]]:
    """Peripheral name → its (number, name) interrupts, attributed by :func:`_irq_owner`."""
    names = {p.name for p in peripherals}
    owners: dict[str, set[tuple[int, str]]] = {}
    for peripheral in peripherals:
        for interrupt in peripheral.interrupts or ():
            owner = _irq_owner(interrupt.name, peripheral.name, names)
            owners.setdefault(owner, set()).add((int(interrupt.value), interrupt.name))
    return owners


def device_to_facts(device: Any, source: str) -> dict[str, Any]:
    """Turn a parsed ``cmsis_svd`` device into the ``svd.json`` dictionary (deterministic)."""
    cpu = device.cpu
    cpu_facts: dict[str, Any] = {}
    if cpu is not None:
        cpu_facts = {
            "name": _enum_value(cpu.name),
            "revision": cpu.revision,
            "fpu": bool(cpu.fpu_present),
            "fpu_dp": bool(cpu.fpu_dp),
            "mpu": bool(cpu.mpu_present),
            "dcache": bool(cpu.dcache_present),
            "icache": bool(cpu.icache_present),
            "nvic_prio_bits": cpu.nvic_prio_bits,
        }
    by_number: dict[int, dict[str, Any]] = {}
    peripherals: dict[str, dict[str, Any]] = {}
    registers: dict[str, list[list[Any]]] = {}
    owned = _irq_owners(device.peripherals)
    for peripheral in device.peripherals:
        name = peripheral.name
        group = peripheral.group_name or _TRAILING_DIGITS.sub("", name)
        irqs = sorted(owned.get(name, ()))
        for number, irq_name in irqs:
            entry = by_number.setdefault(number, {"names": set(), "peripherals": set()})
            entry["names"].add(irq_name)
            entry["peripherals"].add(name)
        blocks = peripheral.address_blocks or ()
        size = max((int(b.offset) + int(b.size) for b in blocks), default=0)
        record: dict[str, Any] = {"base": int(peripheral.base_address), "group": group, "size": size}
        if peripheral.derived_from:
            record["derived_from"] = peripheral.derived_from
        if irqs:
            record["interrupts"] = [[irq_name, number] for number, irq_name in irqs]
        if peripheral.description:
            record["description"] = " ".join(peripheral.description.split())[:80]
        peripherals[name] = record
        if not peripheral.derived_from and _wants_registers(name, group):
            default_access = _enum_value(peripheral.access) or "read-write"
            rows = [
                _register_row(r, int(peripheral.size or 32), default_access)
                for r in _flat_registers(peripheral.registers)
            ]
            registers[name] = sorted(rows, key=lambda row: (row[1], row[0]))
    interrupts = [
        [number, sorted(entry["names"])[0], sorted(entry["peripherals"])] for number, entry in sorted(by_number.items())
    ]
    return {
        "format": SVD_JSON_FORMAT,
        "source": source,
        "device": {
            "name": device.name,
            "vendor": device.vendor,
            "version": device.version,
            "width": device.width,
            "cpu": cpu_facts,
        },
        "interrupts": interrupts,
        "peripherals": peripherals,
        "registers": registers,
    }


def dumps_facts(facts: dict[str, Any]) -> str:
    """Serialize deterministically: sorted keys, compact rows, one peripheral/register block per line."""

    def compact(value: Any) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    lines = ["{"]
    keys = sorted(facts)
    for index, key in enumerate(keys):
        value = facts[key]
        tail = "," if index < len(keys) - 1 else ""
        if isinstance(value, dict) and key in ("peripherals", "registers"):
            inner = [f" {compact(k)}:{compact(value[k])}" for k in sorted(value)]
            lines.append(f"{compact(key)}:{{\n" + ",\n".join(inner) + f"\n}}{tail}")
        elif isinstance(value, list) and key == "interrupts":
            inner = [f" {compact(row)}" for row in value]
            lines.append(f"{compact(key)}:[\n" + ",\n".join(inner) + f"\n]{tail}")
        else:
            lines.append(f"{compact(key)}:{compact(value)}{tail}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def parse_svd_bytes(data: bytes, source: str) -> dict[str, Any]:
    """Parse SVD XML bytes with cmsis-svd and derive the facts."""
    from cmsis_svd import SVDParser
    from lxml import etree

    try:
        tree = etree.parse(io.BytesIO(data))
        device = SVDParser(tree).get_device()
    except Exception as exc:  # cmsis-svd raises assorted errors on malformed input
        raise SvdImportError(f"{source}: not a readable CMSIS-SVD file ({type(exc).__name__}: {exc})") from exc
    return device_to_facts(device, source)


def svd_from_path(path: Path) -> dict[str, Any]:
    """Facts from an SVD file on disk."""
    if not path.is_file():
        raise SvdImportError(f"SVD file not found: {path}")
    return parse_svd_bytes(path.read_bytes(), path.name)


def _pyocd_svd_archive() -> Path:
    try:
        import pyocd
    except ImportError as exc:
        raise SvdImportError("pyOCD is not installed: pip install pyocd") from exc
    return Path(pyocd.__file__).parent / "debug" / "svd" / "svd_data.zip"


def svd_from_pyocd(target: str) -> dict[str, Any]:
    """Facts from the SVD bundled with pyOCD (its ``svd_data.zip``) for a built-in target.

    pyOCD names the SVD inside each target class's constructor (``SVDFile.from_builtin("x.svd")``), so
    the lookup reads that name from the class source, falling back to ``<target>.svd`` in the archive.
    """
    import inspect

    archive = _pyocd_svd_archive()
    with zipfile.ZipFile(archive) as bundle:
        members = {Path(name).stem.lower(): name for name in bundle.namelist() if name.endswith(".svd")}
        member = members.get(target.lower())
        if member is None:
            from pyocd.target import TARGET

            cls = TARGET.get(target.lower())
            match = re.search(r'from_builtin\("([^"]+)"\)', inspect.getsource(cls)) if cls else None
            member = match.group(1) if match else None
        if member is None or member not in bundle.namelist():
            near = sorted(stem for stem in members if stem.startswith(target.lower()[:5]))[:10]
            raise SvdImportError(
                f"no SVD for {target!r} in pyOCD's {archive}; bundled SVDs starting alike: {', '.join(near) or 'none'}"
            )
        data = bundle.read(member)
    return parse_svd_bytes(data, f"pyocd:{member}")


def svd_from_pack(device_name: str) -> dict[str, Any]:
    """Facts from the SVD of a device whose CMSIS pack is in cmsis-pack-manager's cache."""
    try:
        import cmsis_pack_manager
    except ImportError as exc:
        raise SvdImportError("cmsis-pack-manager is not installed: pip install cmsis-pack-manager") from exc
    cache = cmsis_pack_manager.Cache(True, True)
    info = cache.index.get(device_name)
    if info is None:
        known = sorted(name for name in cache.index if name.startswith(device_name[:7]))[:10]
        raise SvdImportError(
            f"device {device_name!r} is not in cmsis-pack-manager's index ({cache.index_path}"
            f"{'' if Path(cache.index_path).is_file() else ', which does not exist'}); similar: "
            f"{', '.join(known) or 'none'}. Install its pack first: `pyocd pack install {device_name}`"
        )
    ref = info.get("from_pack", {})
    pack_path = Path(cache.data_path, ref.get("vendor", ""), ref.get("pack", ""), f"{ref.get('version', '')}.pack")
    svd_member = info.get("debug")
    if not pack_path.is_file() or not svd_member:
        raise SvdImportError(
            f"the CMSIS pack for {device_name!r} is not downloaded (looked for {pack_path}): "
            f"run `pyocd pack install {device_name}`"
        )
    with zipfile.ZipFile(pack_path) as pack:
        data = pack.read(svd_member.replace("\\", "/"))
    return parse_svd_bytes(data, f"pack:{pack_path.name}:{svd_member}")
