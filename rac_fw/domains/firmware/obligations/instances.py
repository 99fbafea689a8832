"""E_PERIPHERAL_SHARED: two uses of one peripheral block under different names.

Some chips give one hardware block several register views, each a "peripheral" of its own in the
SVD at the *same base address*: on the nRF52840 SPI0, SPIM0, SPIS0, TWI0, TWIM0 and TWIS0 are one
instance (likewise instance 1; SPI2/SPIM2/SPIS2; UART0/UARTE0), and only one view can be enabled at
a time (PS §4.6 "Peripheral interface": peripherals sharing an ID share registers and resources).
The sharing is derived from the facts — SVD base addresses, and for devicetree names such as
``i2c0`` the node's unit address (``Target.dt_reg``) — never from a list of chip names. Two uses of
one block conflict when they use it as different kinds of bus (an I2C device on TWIM0 and an SPI
device on SPIM0); two I2C devices on TWIM0 are one bus, not a conflict. Relaxations move the later
use to an instance of its own kind whose block is free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.claims import uart_instance
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import normalized
from rac_fw.domains.firmware.obligations.peripherals import instances_like
from rac_fw.domains.firmware.plan.evidence import Path, relax, replace, violation
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag

CODE = "E_PERIPHERAL_SHARED"

#: Controller families a device of each bus kind may name (suggestions keep the plan's own family).
BUS_FAMILIES = {"i2c": ("TWIM", "TWI", "I2C"), "spi": ("SPIM", "SPI")}


@dataclass(frozen=True)
class Use:
    """One use of a peripheral block by the plan."""

    name: str
    """The instance name the plan wrote (``TWIM0``, ``SPIM0``, ``I2C0``)."""
    kind: str
    """How it is used: ``i2c``, ``spi`` or ``uart``."""
    owner: str
    """The plan object using it (a device name, or the operation)."""
    path: Path


def block_base(target: Target, name: str) -> int | None:
    """The base address of the block behind instance ``name``: its SVD peripheral, else the unit
    address of the devicetree node of that label (``Target.dt_reg``), else None (unknown: not judged)."""
    peripheral = target.peripherals.get(name) or target.peripherals.get(name.upper())
    if peripheral is not None:
        return peripheral.base
    reg = target.dt_reg.get(normalized(name))
    return int(reg) if isinstance(reg, int) else None


def sharing(target: Target, base: int) -> list[str]:
    """Every SVD peripheral at ``base`` (the views of one block), in name order."""
    return sorted(p.name for p in target.peripherals.values() if p.base == base)


def _uses(plan: Plan, target: Target) -> list[Use]:
    found = [
        Use(device.controller, device.bus, device.name, ["resources", "devices", i, "controller"])
        for i, device in enumerate(plan.resources.devices)
    ]
    for i, op in enumerate(plan.operations):
        if spec(op.op).has(Flag.CONSOLE):
            instance = uart_instance(target, op)
            if instance is not None:
                found.append(Use(instance, "uart", op.name or f"operations[{i}]", ["operations", i, "uart"]))
    return found


def _family(name: str) -> str:
    return re.sub(r"\d+$", "", name.upper())


def _moves(target: Target, use: Use, others: list[Use]) -> list[Relaxation]:
    """Instances of ``use``'s family whose block no other kind of use (among ``others``) holds."""
    if use.kind not in BUS_FAMILIES:
        return []
    held: dict[int, set[str]] = {}
    for other in others:
        if (base := block_base(target, other.name)) is not None:
            held.setdefault(base, set()).add(other.kind)
    own = _family(use.name)
    families = (own,) if own in BUS_FAMILIES[use.kind] else BUS_FAMILIES[use.kind]
    options = []
    for name in instances_like(target, use.name, families):
        base = block_base(target, name)
        if name != use.name and base is not None and held.get(base, set()) <= {use.kind}:
            options.append(relax(f"put {use.owner} on {name}", replace(use.path, name)))
    return options


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Uses of one peripheral block as two different kinds of bus."""
    found: list[Evidence] = []
    first: dict[int, Use] = {}
    uses = _uses(plan, target)
    for use in uses:
        base = block_base(target, use.name)
        if base is None:
            continue
        holder = first.setdefault(base, use)
        if holder.kind == use.kind:
            continue
        views = "/".join(sharing(target, base)) or "one block"
        found.append(
            violation(
                CODE,
                f"{use.name} ({use.kind}, {use.owner}) and {holder.name} ({holder.kind}, {holder.owner}) are one "
                f"peripheral at 0x{base:08X} ({views}): only one of them can be enabled",
                use.path,
                [use.name, holder.name, use.owner, holder.owner],
                relaxations=[
                    *_moves(target, use, [u for u in uses if u is not use]),
                    *_moves(target, holder, [u for u in uses if u is not holder]),
                ],
            )
        )
    return found
