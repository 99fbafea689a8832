"""The ``devicetree:`` block: external device nodes (compatible, properties, interrupt wiring) as plan content.

Each node describes one device the plan declares in ``resources.devices`` (which fixes its bus,
controller and address or chip select, so the bus obligations still apply): its ``compatible``, the
binding's properties and the GPIO its interrupt output drives. Before lowering, every node is checked
against the binding facts (``facts/bindings.yaml``, harvested from Zephyr's ``dts/bindings``):

* ``E_DT_DEVICE_UNKNOWN`` — the node names no declared device.
* ``E_DT_BINDING_UNKNOWN`` — no binding facts for the compatible, or its driver does not bind on the
  device's bus; the relaxations are the known compatibles that do.
* ``E_DT_REQUIRED_PROPERTY`` — a property the binding requires is absent (relaxations: its allowed values).
* ``E_DT_PROPERTY_INVALID`` — a property the binding does not declare, of the wrong type, or outside
  its enum; an interrupt on a binding without one, or on a pin that is not a GPIO of the target.

Zephyr realizes the block as child nodes of the bus controller in the overlay
(``&i2c1 { ext_env: bme280@76 { compatible = "bosch,bme280"; reg = <0x76>; }; };``), enables the
driver's Kconfig symbols and, for SPI, the controller's ``cs-gpios``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StringConstraints

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.devicetree import Binding, BindingProperty, binding, bindings
from rac_fw.domains.firmware.facts.query import pin_free
from rac_fw.domains.firmware.plan.base import PlanModel
from rac_fw.domains.firmware.plan.evidence import add, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name, PinName
from rac_fw.domains.firmware.plan.spec import SectionSpec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan
    from rac_fw.domains.firmware.plan.resources import Device

Compatible = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*,[a-z0-9][a-z0-9.-]*$", max_length=64)]
PropertyName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,47}$")]
#: String property values reach the overlay quoted: a conservative alphabet keeps them literal.
PropertyValue = int | bool | Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9 _.,+-]{0,64}$")]


class DeviceNode(PlanModel):
    """One external device's devicetree node: compatible, binding properties and interrupt wiring."""

    device: Name = Field(description="The device in resources.devices (its bus, controller and address).")
    compatible: Compatible = Field(description="Devicetree compatible, e.g. bosch,bme280, st,lis2dh, ti,tmp116.")
    properties: dict[PropertyName, PropertyValue] = Field(
        default_factory=dict, max_length=16, description="Binding properties beyond reg (int, string or boolean)."
    )
    interrupt: PinName | None = Field(
        default=None, description="GPIO the device's interrupt output drives (the binding's *-gpios property)."
    )


class Devicetree(PlanModel):
    """External devicetree nodes the application adds: each a declared device with its compatible.

    Checked against the binding facts (required properties, types, enums, interrupt wiring) and lowered
    into the overlay as a child of the device's bus controller, with the driver's Kconfig symbols.
    """

    nodes: list[DeviceNode] = Field(min_length=1, max_length=16)


# --- look-ups operations use --------------------------------------------------------------------------


def node_of(plan: Plan, device: str) -> tuple[DeviceNode, Binding] | None:
    """The node (and its binding facts) the plan's devicetree block gives ``device``, if any."""
    block: Devicetree | None = getattr(plan, "devicetree", None)
    if block is None:
        return None
    node = next((n for n in block.nodes if n.device == device), None)
    facts = binding(node.compatible) if node is not None else None
    return (node, facts) if node is not None and facts is not None else None


def node_label(device: str) -> str:
    """The overlay label of a device's node (prefixed: board labels never collide with it)."""
    return f"ext_{device}"


# --- obligations -------------------------------------------------------------------------------------

UNKNOWN_DEVICE = "E_DT_DEVICE_UNKNOWN"
UNKNOWN_BINDING = "E_DT_BINDING_UNKNOWN"
REQUIRED = "E_DT_REQUIRED_PROPERTY"
INVALID = "E_DT_PROPERTY_INVALID"


def _valid(prop: BindingProperty, value: PropertyValue) -> bool:
    if prop.type == "boolean":
        return isinstance(value, bool)
    if prop.type == "int" and (isinstance(value, bool) or not isinstance(value, int)):
        return False
    if prop.type == "string" and not isinstance(value, str):
        return False
    return not prop.enum or value in prop.enum


def _node(plan: Plan, target: Target, index: int, node: DeviceNode) -> list[Evidence]:

    where: list[str | int] = ["devicetree", "nodes", index]
    device = plan.device(node.device)
    if device is None:
        used = {n.device for n in plan.devicetree.nodes} if plan.devicetree else set()
        free = [d.name for d in plan.resources.devices if d.name not in used]
        return [
            violation(
                UNKNOWN_DEVICE,
                f"devicetree node {index} describes {node.device!r}, which resources.devices does not declare",
                [*where, "device"],
                [node.device],
                relaxations=[relax(f"describe {d}", replace([*where, "device"], d)) for d in free[:3]]
                + [relax(f"drop the node for {node.device}", remove(where))],
            )
        ]
    facts = binding(node.compatible)
    if facts is None or device.bus not in facts.buses:
        fitting = sorted(c for c, b in bindings().items() if device.bus in b.buses)
        why = "no binding facts" if facts is None else f"a driver for {', '.join(facts.buses)} only"
        return [
            violation(
                UNKNOWN_BINDING,
                f"{node.compatible} has {why}; {device.name} is an {device.bus} device",
                [*where, "compatible"],
                [node.compatible, device.name, device.bus],
                relaxations=[relax(f"describe it as {c}", replace([*where, "compatible"], c)) for c in fitting[:4]],
            )
        ]
    found: list[Evidence] = []
    for prop in facts.required:
        if prop.name not in node.properties:
            values = list(prop.enum[:2]) or ([True] if prop.type == "boolean" else [])
            found.append(
                violation(
                    REQUIRED,
                    f"{node.compatible} requires property {prop.name} ({prop.type}"
                    + (f", one of {', '.join(map(str, prop.enum))}" if prop.enum else "")
                    + f"); the node for {device.name} has none",
                    [*where, "properties"],
                    [device.name, node.compatible, prop.name],
                    relaxations=[
                        relax(f"set {prop.name} = {v}", add([*where, "properties", prop.name], v)) for v in values
                    ],
                )
            )
    for name, value in node.properties.items():
        declared = facts.properties.get(name)
        path: list[str | int] = [*where, "properties", name]
        if declared is not None and _valid(declared, value):
            continue
        options = [relax(f"drop {name}", remove(path))]
        if declared is not None:
            options = [relax(f"set {name} = {v}", replace(path, v)) for v in declared.enum[:3]] + (
                [] if declared.required else options
            )
        why = (
            f"the {node.compatible} binding declares no property {name}"
            if declared is None
            else f"{name} of {node.compatible} is a {declared.type}"
            + (f" in {{{', '.join(map(str, declared.enum))}}}" if declared.enum else "")
            + f", not {value!r}"
        )
        found.append(violation(INVALID, why, path, [device.name, node.compatible, name], relaxations=options))
    if node.interrupt is not None:
        # The one free-pin rule (not reserved, strapping, needing a switch, or wired to a board LED/button).
        problem = (
            f"the {node.compatible} binding has no interrupt output"
            if facts.interrupt is None
            else None
            if pin_free(target, node.interrupt)
            else f"{node.interrupt} is not a free GPIO of {target.id} (reserved, strapping or board-wired)"
        )
        if problem:
            found.append(
                violation(
                    INVALID,
                    problem,
                    [*where, "interrupt"],
                    [device.name, node.interrupt],
                    relaxations=[relax("leave the interrupt unwired", remove([*where, "interrupt"]))],
                )
            )
    return found


def check(plan: Plan, target: Target, framework: str, block: Devicetree) -> list[Evidence]:
    """Every node against its binding facts and the device it describes."""
    return [e for i, node in enumerate(block.nodes) for e in _node(plan, target, i, node)]


# --- realization -------------------------------------------------------------------------------------


def _value(prop: str, value: PropertyValue) -> str | None:
    if isinstance(value, bool):
        return f"{prop};" if value else None
    if isinstance(value, int):
        return f"{prop} = <{value:#x}>;"
    return f'{prop} = "{value}";'


def _zephyr(b: ZephyrBuilder, block: Devicetree) -> None:
    """Each node as a child of its controller; SPI controllers list the chip selects in device order."""
    chip_selects: dict[str, list[str]] = {}
    for node in block.nodes:
        device: Device | None = b.plan.device(node.device)
        facts = binding(node.compatible)
        if device is None or facts is None:
            continue
        bus = b.node_label(device.controller)
        if bus is None:
            enabled = sorted(x for x in b.labels if re.fullmatch(rf"{device.bus}\d*", x))
            raise b.unsupported(
                f"resources.devices.{device.name}.controller",
                f"{device.controller} is not a {device.bus} controller of the {b.board} devicetree; "
                f"enabled: {', '.join(enabled) or 'none'}",
                [device.controller],
                [],
            )
        lines = [f'compatible = "{node.compatible}";']
        if device.bus == "i2c" and device.address is not None:
            unit, reg = f"{device.address:x}", f"<{device.address:#04x}>"
        else:
            selects = chip_selects.setdefault(bus, [])
            selects.append(b.gpio_ref(device.chip_select or "", active_low=True))
            unit, reg = f"{len(selects) - 1}", f"<{len(selects) - 1}>"
            lines.append(f"spi-max-frequency = <{device.frequency_hz}>;")
        lines.insert(1, f"reg = {reg};")
        lines += [line for name, v in sorted(node.properties.items()) if (line := _value(name, v))]
        if node.interrupt is not None and facts.interrupt is not None:
            lines.append(f"{facts.interrupt} = {b.gpio_ref(node.interrupt, facts.interrupt_active_low)};")
        body = "\n".join(f"\t{line}" for line in lines)
        name = node.compatible.split(",", 1)[1]
        b.app.okay(bus, f"{node_label(device.name)}: {name}@{unit} {{\n{body}\n}};")
        b.app.need("sensor" if facts.channels else device.bus, *facts.kconfig)
        b.app.need(device.bus)
    for bus, selects in chip_selects.items():
        b.app.okay(bus, f"cs-gpios = {', '.join(selects)};")


SECTION = SectionSpec(
    name="devicetree",
    model=Devicetree,
    family="devicetree",
    realizations={"zephyr": _zephyr},
    checks=(check,),
    codes=(UNKNOWN_DEVICE, UNKNOWN_BINDING, REQUIRED, INVALID),
)
