"""Bus obligations for devices on I2C/SPI.

E_I2C_ADDRESS: 7-bit addresses 0x00-0x07 and 0x78-0x7F are reserved by the I2C specification
(general call, CBUS, HS-mode master codes, 10-bit addressing); two devices on one bus need distinct
addresses. E_CLOCK_RANGE: a device clock its bus controller cannot generate, from ``Target.i2c`` /
``Target.spi`` (F4 I2C 400 kHz, H7 Fast-mode Plus 1 MHz, nRF TWIM only 100/250/400 kHz, SPI at most
the kernel clock over the smallest prescaler); the relaxation is the nearest rate the controller has.
"""

from __future__ import annotations

from dataclasses import dataclass

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import Clocks
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.model import Plan

RESERVED_LOW, RESERVED_HIGH = range(0x00, 0x08), range(0x78, 0x80)
#: I2C fast mode: the limit assumed only when a target's facts state no ``extra.i2c`` at all.
I2C_DEFAULT_MAX_HZ = 400_000


@dataclass(frozen=True)
class BusClock:
    """What one bus controller can clock a device at: a ceiling and, for some, discrete settings."""

    max_hz: int | None
    settings: tuple[int, ...] = ()
    """The only rates the controller can produce (nRF TWIM/SPIM FREQUENCY); empty = any up to max."""
    exact: bool = False
    """The requested rate must be one of ``settings`` (an I2C bus speed). An SPI rate is a device's
    ceiling instead: drivers pick the fastest setting not above it, so only ``max_hz`` binds."""
    min_hz: int | None = None
    """The slowest rate the controller makes (STM32 SPI: kernel clock / the largest prescaler): a device
    asking for less gets no setting at all (the HAL and Zephyr drivers refuse it)."""

    def nearest(self, hz: int) -> int | None:
        """The allowed rate closest to ``hz`` from below (never faster than the device asked), else the slowest."""
        if self.min_hz is not None and hz < self.min_hz:
            return self.min_hz
        allowed = [f for f in self.settings if self.max_hz is None or f <= self.max_hz]
        if not allowed:
            return self.max_hz if self.max_hz is not None and hz > self.max_hz else None
        below = [f for f in allowed if f <= hz]
        return max(below) if below else min(allowed)

    def allows(self, hz: int) -> bool:
        within = (self.max_hz is None or hz <= self.max_hz) and (self.min_hz is None or hz >= self.min_hz)
        return within and not (self.exact and self.settings and hz not in self.settings)


def bus_clock(clocks: Clocks, bus: str, controller: str) -> BusClock:
    """The clock limits of ``controller`` from ``Target.i2c`` / ``Target.spi``.

    Per instance first (``SPIM3: {max_hz, frequencies_hz}``, or ``SPI1: {clock: APB2}`` with the
    family's ``prescalers``, giving kernel clock (as the plan runs it) / smallest prescaler; an I2C
    instance's ``clock`` is its timing kernel, not a limit), then the family-wide ``max_hz`` /
    ``frequencies_hz``. I2C without any facts falls back to fast mode (400 kHz).
    """
    target = clocks.target
    facts = target.i2c if bus == "i2c" else target.spi
    entry = facts.instances.get(controller) if facts is not None else None
    settings = entry.frequencies_hz if entry is not None and entry.frequencies_hz else None
    if settings is None:
        settings = facts.frequencies_hz if facts is not None else ()
    exact = bus == "i2c"
    if entry is not None and entry.max_hz is not None:
        return BusClock(entry.max_hz, settings, exact)
    kernel = clocks.hz(entry.clock if entry is not None else None)
    if kernel and facts is not None and facts.prescalers:
        slowest = -(-kernel // max(facts.prescalers)) if bus == "spi" else None
        return BusClock(kernel // min(facts.prescalers), settings, exact, slowest)
    if facts is not None and facts.max_hz is not None:
        return BusClock(facts.max_hz, settings, exact)
    return BusClock(I2C_DEFAULT_MAX_HZ if bus == "i2c" and facts is None else None, settings, exact)


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
                nearest = min(free, key=lambda a: abs(a - device.address))
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
                nearest = min(free, key=lambda a: abs(a - device.address))
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
        limits = bus_clock(plan_clocks(plan, target, framework), device.bus, device.controller)
        if not limits.allows(device.frequency_hz):
            path = [*base, "frequency_hz"]
            rate = limits.nearest(device.frequency_hz)
            shown = [str(f) for f in limits.settings if limits.exact and (limits.max_hz is None or f <= limits.max_hz)]
            what = f"clocks only {', '.join(shown)} Hz" if shown else f"generates at most {limits.max_hz} Hz"
            if limits.min_hz is not None and device.frequency_hz < limits.min_hz:
                what = f"generates at least {limits.min_hz} Hz (its kernel clock over the largest prescaler)"
            found.append(
                violation(
                    "E_CLOCK_RANGE",
                    f"{device.name} at {device.frequency_hz} Hz: {device.controller} {what}",
                    path,
                    [device.name, device.controller],
                    [measure("requested", device.frequency_hz, "Hz")]
                    + ([measure("max", limits.max_hz, "Hz")] if limits.max_hz is not None else [])
                    + ([measure("min", limits.min_hz, "Hz")] if limits.min_hz is not None else []),
                    [relax(f"clock {device.name} at {rate} Hz", replace(path, rate))] if rate else [],
                )
            )
    return found
