"""Bus obligations for devices on I2C/SPI.

E_I2C_ADDRESS: 7-bit addresses 0x00-0x07 and 0x78-0x7F are reserved by the I2C specification
(general call, CBUS, HS-mode master codes, 10-bit addressing); two devices on one bus need distinct
addresses. E_CLOCK_RANGE: a device clock above what its bus controller can generate (I2C fast mode
400 kHz unless the facts state fast-mode plus; SPI at most half the controller's clock where stated).
"""

from __future__ import annotations

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.obligations.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.obligations.quantities import clock_hz, extra
from rac_fw.domains.firmware.plan.model import Plan

RESERVED_LOW, RESERVED_HIGH = range(0x00, 0x08), range(0x78, 0x80)
#: I2C fast mode: what every supported controller can do without fact-stated fast-mode plus.
I2C_DEFAULT_MAX_HZ = 400_000


def _max_hz(target: Target, bus: str, controller: str, framework: str) -> int | None:
    facts = extra(target, bus)
    entry = facts.get(controller)
    if isinstance(entry, dict):
        if "max_hz" in entry:
            return int(entry["max_hz"])
        hz = clock_hz(target, entry.get("clock"), framework)
        if hz and bus == "spi":
            return hz // 2
    if "max_hz" in facts:
        return int(facts["max_hz"])
    return I2C_DEFAULT_MAX_HZ if bus == "i2c" else None


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Device addresses and bus clocks."""
    found: list[Evidence] = []
    used: dict[tuple[str, int], str] = {}
    for i, device in enumerate(plan.resources.devices):
        base: Path = ["resources", "devices", i]
        if device.bus == "i2c" and device.address is not None:
            path: Path = [*base, "address"]
            taken = {a for (c, a) in used if c == device.controller}
            free = [a for a in range(0x08, 0x78) if a not in taken]
            if device.address in RESERVED_LOW or device.address in RESERVED_HIGH:
                nearest = min(free, key=lambda a: abs(a - device.address))  # type: ignore[operator]
                found.append(
                    violation(
                        "E_I2C_ADDRESS",
                        f"0x{device.address:02X} is a reserved I2C address (0x00-0x07, 0x78-0x7F)",
                        path,
                        [device.name, f"0x{device.address:02X}"],
                        relaxations=[
                            relax(
                                f"use 0x{nearest:02X} (if the device's address pins allow it)", replace(path, nearest)
                            )
                        ],
                    )
                )
            elif (device.controller, device.address) in used:
                other = used[(device.controller, device.address)]
                nearest = min(free, key=lambda a: abs(a - device.address))  # type: ignore[operator]
                found.append(
                    violation(
                        "E_I2C_ADDRESS",
                        f"{device.name} and {other} both answer at 0x{device.address:02X} on {device.controller}",
                        path,
                        [device.name, other, f"0x{device.address:02X}"],
                        relaxations=[
                            relax(f"use 0x{nearest:02X} (strap the device's address pins)", replace(path, nearest))
                        ],
                    )
                )
            else:
                used[(device.controller, device.address)] = device.name
        limit = _max_hz(target, device.bus, device.controller, framework)
        if limit is not None and device.frequency_hz > limit:
            path = [*base, "frequency_hz"]
            found.append(
                violation(
                    "E_CLOCK_RANGE",
                    f"{device.name} at {device.frequency_hz} Hz exceeds what {device.controller} "
                    f"generates ({limit} Hz)",
                    path,
                    [device.name, device.controller],
                    [measure("requested", device.frequency_hz, "Hz"), measure("max", limit, "Hz")],
                    [relax(f"clock {device.name} at {limit} Hz", replace(path, limit))],
                )
            )
    return found
