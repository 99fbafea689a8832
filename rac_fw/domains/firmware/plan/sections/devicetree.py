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

The block also carries pin control and DMA channels of on-chip peripherals:

* ``pinctrl`` — a peripheral's signals on chosen pins. Checked against the chip's pin facts
  (``E_DT_PINCTRL``): the peripheral must exist and be a kind whose roles are known, every required role
  must have a pin, the pin must carry the signal (STM32: an alternate function of ``pins.json``; nRF:
  any pin through PSEL), be free (not reserved, strapping or board-wired, unless the board wires it to
  this very signal) and not be taken by another group or resource. Relaxations: the free pins that carry
  the signal, nearest port first.
* ``dmas`` — a peripheral's DMA request per direction (``E_DT_DMA``): the facts must route the request
  (RM0090 fixed stream/channel mapping, DMAMUX request lines) to a controller of the board devicetree
  with a stream no other entry takes; a peripheral with built-in EasyDMA takes no ``dmas``.

Zephyr realizes the block as child nodes of the bus controller in the overlay
(``&i2c1 { ext_env: bme280@76 { compatible = "bosch,bme280"; reg = <0x76>; }; };``), enables the
driver's Kconfig symbols and, for SPI, the controller's ``cs-gpios``. Pin groups become
``pinctrl-0 = <&usart1_tx_pa9 &usart1_rx_pa10>`` on STM32 (labels of hal_stm32's generated
``*-pinctrl.dtsi``) and ``&pinctrl`` groups of ``NRF_PSEL(UART_TX, 1, 2)`` (default and sleep states)
on nRF; DMA entries ``dmas``/``dma-names`` with the controller enabled.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from pydantic import Field, StringConstraints, model_validator

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.devicetree import (
    Binding,
    BindingProperty,
    DmaRoute,
    binding,
    bindings,
    dma_route,
    node_label_of,
    peripheral_kind,
    pin_signal,
)
from rac_fw.domains.firmware.facts.query import board_wiring, free_pins, pin_free
from rac_fw.domains.firmware.plan.base import PlanModel
from rac_fw.domains.firmware.plan.escape import dts_string
from rac_fw.domains.firmware.plan.evidence import add, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name, PeripheralName, PinName
from rac_fw.domains.firmware.plan.rules import AnyOf, Given, Implies, Rule
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


SensorChannel = Literal["ambient_temp", "die_temp", "humidity", "press", "light", "voltage", "current", "distance"]


class RegisterChannel(PlanModel):
    """One sensor channel read from consecutive data registers: raw = the bytes in ``order``, shifted right,
    sign-extended when ``signed``; the channel's value = raw × ``scale_micro`` / 10⁶ + ``offset_micro`` / 10⁶
    in the channel's SI unit (°C, %RH, kPa, lux, V, A, m)."""

    channel: SensorChannel
    reg: int = Field(ge=0, le=0xFF, description="First data register address (the device auto-increments).")
    bytes: Literal[1, 2, 3] = Field(default=2, description="Data bytes read from ``register`` on.")
    order: Literal["big", "little"] = Field(default="big", description="Byte order: big = MSB first.")
    shift: int = Field(default=0, ge=0, le=7, description="Right shift of the assembled value (unused low bits).")
    signed: bool = Field(default=False, description="Two's complement value.")
    scale_micro: int = Field(ge=1, le=100_000_000, description="Channel units per LSB, in millionths.")
    offset_micro: int = Field(default=0, ge=-1_000_000_000, le=1_000_000_000, description="Added after scaling.")


class RegisterWrite(PlanModel):
    """One configuration register write at driver init (after the identity check)."""

    reg: int = Field(ge=0, le=0xFF, description="Register address.")
    value: int = Field(ge=0, le=0xFF, description="Byte written.")


class RegisterDriver(PlanModel):
    """A register-level Zephyr sensor driver the app carries, for a device without an upstream driver.

    The tool generates the driver (``DT_DRV_COMPAT``, ``SENSOR_DEVICE_DT_INST_DEFINE`` with a
    ``sensor_driver_api`` whose ``sample_fetch`` reads each channel's registers with ``i2c_write_read_dt``)
    and its binding YAML under the app's ``dts/bindings``; a devicetree node with this ``compatible`` then
    binds to it and ``sensor_read`` reads it like any sensor. No C in the plan: only the registers.
    """

    compatible: Compatible = Field(description="The compatible the driver serves (vendor,part), e.g. acme,th02.")
    id_register: int | None = Field(default=None, ge=0, le=0xFF, description="Identity (WHO_AM_I) register.")
    id_value: int | None = Field(default=None, ge=0, le=0xFF, description="The value the identity register reads.")
    init: list[RegisterWrite] = Field(default_factory=list, max_length=8, description="Writes at init, in order.")
    channels: list[RegisterChannel] = Field(min_length=1, max_length=4)

    rules: ClassVar[tuple[Rule, ...]] = (
        Implies("id_register and id_value go together", Given("id_register"), Given("id_value"), iff=True),
    )

    @model_validator(mode="after")
    def _unique(self) -> RegisterDriver:
        if len({c.channel for c in self.channels}) != len(self.channels):
            raise ValueError("each channel once per driver")
        return self

    def binding(self) -> Binding:
        """The binding facts of the generated driver (an I2C device serving its channels)."""
        return Binding(compatible=self.compatible, buses=("i2c",), channels=tuple(c.channel for c in self.channels))


PinRole = Literal["tx", "rx", "rts", "cts", "scl", "sda", "sck", "miso", "mosi", "nss"]


class PinGroup(PlanModel):
    """A peripheral's signals on chosen pins: its ``pinctrl-0`` (default state)."""

    peripheral: PeripheralName = Field(
        description="Peripheral instance: USART1, I2C2, SPI3, CAN1, FDCAN1, UARTE1, TWIM0."
    )
    pins: dict[PinRole, PinName] = Field(
        min_length=1, max_length=4, description="Role → pin, e.g. {tx: PA9, rx: PA10}; {scl: P0.27, sda: P0.26}."
    )


class DmaChannel(PlanModel):
    """A peripheral's DMA request in one direction: one ``dmas`` entry, named ``rx`` or ``tx``."""

    peripheral: PeripheralName = Field(description="Peripheral instance whose request it is (USART2, SPI1).")
    direction: Literal["rx", "tx"] = Field(description="rx: peripheral to memory; tx: memory to peripheral.")


class Devicetree(PlanModel):
    """Devicetree content the application adds: external device nodes, pin groups and DMA channels.

    Nodes are declared devices with their compatible, checked against the binding facts (required
    properties, types, enums, interrupt wiring) and lowered into the overlay as children of the device's
    bus controller with the driver's Kconfig symbols. Pin groups and DMA channels are checked against the
    chip's pin and DMA request facts and lowered into the peripheral's node.
    """

    nodes: list[DeviceNode] = Field(default_factory=list, max_length=16)
    pinctrl: list[PinGroup] = Field(default_factory=list, max_length=8)
    dmas: list[DmaChannel] = Field(default_factory=list, max_length=8)
    drivers: list[RegisterDriver] = Field(default_factory=list, max_length=4)

    rules: ClassVar[tuple[Rule, ...]] = (
        AnyOf("a devicetree block needs nodes, pinctrl groups, dmas or drivers",
              ("nodes", "pinctrl", "dmas", "drivers")),
    )  # fmt: skip

    def binding_of(self, compatible: str) -> Binding | None:
        """Binding facts of ``compatible``: harvested from Zephyr, or of a driver the block generates."""
        own = next((d.binding() for d in self.drivers if d.compatible == compatible), None)
        return own or binding(compatible)

    def group_of(self, peripheral: str) -> PinGroup | None:
        """The pin group the block gives ``peripheral``, if any."""
        return next((g for g in self.pinctrl if g.peripheral == peripheral), None)


# --- look-ups operations use --------------------------------------------------------------------------


def node_of(plan: Plan, device: str) -> tuple[DeviceNode, Binding] | None:
    """The node (and its binding facts) the plan's devicetree block gives ``device``, if any."""
    block: Devicetree | None = getattr(plan, "devicetree", None)
    if block is None:
        return None
    node = next((n for n in block.nodes if n.device == device), None)
    facts = block.binding_of(node.compatible) if node is not None else None
    return (node, facts) if node is not None and facts is not None else None


def node_label(device: str) -> str:
    """The overlay label of a device's node (prefixed: board labels never collide with it)."""
    return f"ext_{device}"


# --- obligations -------------------------------------------------------------------------------------

UNKNOWN_DEVICE = "E_DT_DEVICE_UNKNOWN"
UNKNOWN_BINDING = "E_DT_BINDING_UNKNOWN"
REQUIRED = "E_DT_REQUIRED_PROPERTY"
INVALID = "E_DT_PROPERTY_INVALID"
PINCTRL = "E_DT_PINCTRL"
DRIVER = "E_DT_DRIVER"
DMA = "E_DT_DMA"


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
    facts = plan.devicetree.binding_of(node.compatible) if plan.devicetree else binding(node.compatible)
    if facts is None or device.bus not in facts.buses:
        fitting = sorted(c for c, b in bindings().items() if device.bus in b.buses)
        why = "no binding facts" if facts is None else f"a driver for {', '.join(facts.buses)} only"
        return [
            violation(
                UNKNOWN_BINDING,
                f"{node.compatible} has {why}; {device.name} is an {device.bus} device",
                [*where, "compatible"],
                [node.compatible, device.name, device.bus],
                relaxations=[relax(f"describe it as {c}", replace([*where, "compatible"], c)) for c in fitting[:4]]
                + [relax(f"drop the node for {device.name}", remove(where))],
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


def _drop(block: Devicetree, where: list[str | int], what: str) -> Relaxation:
    """Drop one entry of the block, or the whole block when it is its only content (an empty block is invalid)."""
    alone = len(block.nodes) + len(block.pinctrl) + len(block.dmas) + len(block.drivers) == 1
    return relax(f"drop {what}" + (" (and the now empty devicetree block)" if alone else ""),
                 remove(["devicetree"] if alone else where))  # fmt: skip


def _taken_pins(plan: Plan, block: Devicetree, group: int) -> dict[str, str]:
    """Pins other parts of the plan already use → who uses them (groups before ``group`` included)."""
    taken = {p.pin: f"resources.pins.{p.name}" for p in plan.resources.pins}
    taken |= {d.chip_select: f"{d.name}'s chip select" for d in plan.resources.devices if d.chip_select}
    taken |= {n.interrupt: f"{n.device}'s interrupt" for n in block.nodes if n.interrupt}
    for other in block.pinctrl[:group]:
        taken |= {pin: f"{other.peripheral} {role}" for role, pin in other.pins.items()}
    return taken


def _usable(target: Target, pin: str, signal: str, peripheral: str, role: str) -> bool:
    """Free by the one free-pin rule, or wired by the board to this very signal: the board console's own pin for
    this role of its UART (nRF52840-DK UARTE0 TX on P0.06), or a wiring naming the signal (STM32 ``USART2_TX``)."""
    console = target.board.console
    own = console is not None and console.uart.upper() == peripheral.upper()
    if own and console is not None and {"tx": console.tx, "rx": console.rx}.get(role) == pin:
        return True
    return pin_free(target, pin) or signal in (board_wiring(target, pin) or "")


def _group(plan: Plan, target: Target, index: int, group: PinGroup, block: Devicetree) -> list[Evidence]:
    where: list[str | int] = ["devicetree", "pinctrl", index]
    found = peripheral_kind(group.peripheral)
    if found is None or group.peripheral not in target.peripherals:
        same = sorted(p for p in target.peripherals if found and (k := peripheral_kind(p)) and k[0] == found[0])
        why = "is not a peripheral of" if group.peripheral not in target.peripherals else "has no known pin roles on"
        return [
            violation(
                PINCTRL,
                f"{group.peripheral} {why} {target.id}",
                [*where, "peripheral"],
                [group.peripheral, target.id],
                relaxations=[relax(f"configure {p}", replace([*where, "peripheral"], p)) for p in same[:3]]
                + [_drop(block, where, f"the {group.peripheral} pin group")],
            )
        ]
    kind = found[0]
    evidence: list[Evidence] = []
    taken = _taken_pins(plan, block, index)
    for role in kind.required:
        if role not in group.pins:
            signal = pin_signal(group.peripheral, role, "af")
            pins = [p.name for p in free_pins(target, set(taken) | set(group.pins.values()), signal)][:2]
            evidence.append(
                violation(
                    PINCTRL,
                    f"{group.peripheral} ({kind.kind}) needs a {role} pin; its pin group has none",
                    [*where, "pins"],
                    [group.peripheral, role],
                    relaxations=[relax(f"put {role} on {p}", add([*where, "pins", role], p)) for p in pins],
                )
            )
    for role, pin in group.pins.items():
        path: list[str | int] = [*where, "pins", role]
        facts = target.pins.get(pin)
        routing = facts.routing if facts is not None else "af"
        signal = pin_signal(group.peripheral, role, routing)
        stm32_signal = pin_signal(group.peripheral, role, "af")
        others = set(taken) | {p for r, p in group.pins.items() if r != role}
        if role not in kind.roles or (routing == "psel" and role not in kind.psel):
            problem = f"{group.peripheral} has no {role} signal (roles: {', '.join(kind.roles)})"
        elif facts is None:
            problem = f"{target.id} has no pin {pin}"
        elif not facts.can_carry(stm32_signal if routing != "psel" else signal):
            problem = f"{pin} cannot carry {stm32_signal} (no alternate function routes it there)"
        elif not _usable(target, pin, stm32_signal, group.peripheral, role):
            problem = f"{pin} is not free: {board_wiring(target, pin) or facts.reserved or 'strapping or NFC pin'}"
        elif pin in others:
            problem = f"{pin} is already used by {taken.get(pin) or group.peripheral}"
        else:
            continue
        near = [p.name for p in free_pins(target, others, stm32_signal, near=pin)][:3]
        evidence.append(
            violation(
                PINCTRL,
                f"{group.peripheral} {role} on {pin}: {problem}",
                path,
                [group.peripheral, pin, stm32_signal],
                relaxations=[relax(f"put {role} on {p}", replace(path, p)) for p in near]
                if role in kind.roles
                else [relax(f"drop {role}", remove(path))],
            )
        )
    return evidence


def route_requests(target: Target, requests: list[str], taken: set[tuple[str, int]]) -> list[DmaRoute | str]:
    """Each request's route (or why there is none), streams allocated in order; every stream a route
    takes is added to ``taken`` (controller, stream), so a later request never gets the same one."""
    routes: list[DmaRoute | str] = []
    for request in requests:
        route = dma_route(target, request, taken)
        if isinstance(route, DmaRoute):
            taken.add((route.controller, route.stream))
        routes.append(route)
    return routes


def dma_routes(target: Target, block: Devicetree, taken: set[tuple[str, int]] | None = None) -> list[DmaRoute | str]:
    """Each ``dmas`` entry's route (or why there is none), streams allocated in entry order."""
    requests = [f"{entry.peripheral}_{entry.direction.upper()}" for entry in block.dmas]
    return route_requests(target, requests, set() if taken is None else taken)


def _dmas(target: Target, block: Devicetree) -> list[Evidence]:
    found: list[Evidence] = []
    seen: set[tuple[str, str]] = set()
    for index, (entry, route) in enumerate(zip(block.dmas, dma_routes(target, block), strict=True)):
        where: list[str | int] = ["devicetree", "dmas", index]
        request = f"{entry.peripheral}_{entry.direction.upper()}"
        key = (entry.peripheral, entry.direction)
        problem = (
            f"{request} is listed twice"
            if key in seen
            else f"{entry.peripheral} is not a peripheral of {target.id}"
            if entry.peripheral not in target.peripherals
            else route
            if isinstance(route, str)
            else None
        )
        seen.add(key)
        if problem is None:
            continue
        found.append(
            violation(
                DMA,
                problem,
                where,
                [entry.peripheral, request],
                relaxations=[_drop(block, where, f"the {request} channel")],
            )
        )
    return found


def _drivers(block: Devicetree) -> list[Evidence]:
    """A generated driver must be needed: no upstream binding for its compatible, and a node using it."""
    found: list[Evidence] = []
    used = {n.compatible for n in block.nodes}
    for index, driver in enumerate(block.drivers):
        where: list[str | int] = ["devicetree", "drivers", index]
        problem = (
            f"Zephyr has a driver for {driver.compatible} (binding facts): the app needs no register-level copy"
            if binding(driver.compatible) is not None
            else f"no devicetree node uses {driver.compatible}: the generated driver would bind to nothing"
            if driver.compatible not in used
            else None
        )
        if problem is None:
            continue
        found.append(
            violation(DRIVER, problem, [*where, "compatible"], [driver.compatible],
                      relaxations=[_drop(block, where, f"the {driver.compatible} driver")])  # fmt: skip
        )
    return found


def check(plan: Plan, target: Target, framework: str, block: Devicetree) -> list[Evidence]:
    """Every node against its binding facts, every pin group against the pins, every DMA entry against the
    request routes."""
    found = [e for i, node in enumerate(block.nodes) for e in _node(plan, target, i, node)]
    found += [e for i, group in enumerate(block.pinctrl) for e in _group(plan, target, i, group, block)]
    return found + _dmas(target, block) + _drivers(block)


# --- realization -------------------------------------------------------------------------------------


def _value(prop: str, value: PropertyValue) -> str | None:
    if isinstance(value, bool):
        return f"{prop};" if value else None
    if isinstance(value, int):
        return f"{prop} = <{value:#x}>;"
    return f"{prop} = {dts_string(value)};"


def _zephyr(b: ZephyrBuilder, block: Devicetree) -> None:
    """Each node as a child of its controller; SPI controllers list the chip selects in device order."""
    chip_selects: dict[str, list[str]] = {}
    for node in block.nodes:
        device: Device | None = b.plan.device(node.device)
        facts = block.binding_of(node.compatible)
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
        lines = [f"compatible = {dts_string(node.compatible)};"]
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
    for group in block.pinctrl:
        _pinctrl(b, group)
    _dma_entries(b, block)
    for driver in block.drivers:
        _driver(b, driver)


def _driver(b: ZephyrBuilder, driver: RegisterDriver) -> None:
    """The driver source under src/drivers/ and its binding under dts/bindings/ (the app's DTS root)."""
    vendor, part = driver.compatible.split(",", 1)
    ident = re.sub(r"\W", "_", f"{vendor}_{part}")
    channels = []
    for i, c in enumerate(driver.channels):
        bits = c.bytes * 8 - c.shift
        order = range(c.bytes) if c.order == "big" else range(c.bytes - 1, -1, -1)
        channels.append({
            "index": i,
            "channel": f"SENSOR_CHAN_{c.channel.upper()}",
            "reg": c.reg,
            "bytes": c.bytes,
            "assemble": " | ".join(f"((uint32_t)buf[{k}] << {8 * (c.bytes - 1 - n)}U)" for n, k in enumerate(order)),
            "shift": c.shift,
            "sign": (1 << (bits - 1)) if c.signed else None,
            "full": 1 << bits,
            "scale": c.scale_micro,
            "offset": c.offset_micro,
        })  # fmt: skip
    view = {"compatible": driver.compatible, "ident": ident, "drv_compat": ident, "driver": driver,
            "channels": channels}  # fmt: skip
    b.app.files[f"src/drivers/{ident}.c"] = b.env.get_template("sensor_driver.c.j2").render(v=view)
    b.app.files[f"dts/bindings/{driver.compatible}.yaml"] = b.env.get_template("sensor_binding.yaml.j2").render(v=view)
    b.app.need("sensor")
    b.app.need("i2c")


def _psel(pin: str, function: str) -> str:
    """``NRF_PSEL(UART_TX, 1, 2)`` for P1.02."""
    port, number = pin[1:].split(".")
    return f"<NRF_PSEL({function}, {int(port)}, {int(number)})>"


def _pinctrl(b: ZephyrBuilder, group: PinGroup) -> None:
    """STM32: the generated pinctrl labels; nRF: default and sleep groups of ``&pinctrl`` (inputs pulled up)."""
    pins = [(role, pin, b.target.pins[pin]) for role, pin in group.pins.items() if pin in b.target.pins]
    routing = pins[0][2].routing if pins else "af"
    label = node_label_of(group.peripheral, routing)
    if routing == "psel":
        found = peripheral_kind(group.peripheral)
        inputs = found[0].inputs if found else ()
        states = []
        for state, extra in (("default", ""), ("sleep", "\t\tlow-power-enable;\n")):
            parts = []
            for n, chosen in enumerate(
                (
                    [(r, p) for r, p, _ in pins if r not in inputs],
                    [(r, p) for r, p, _ in pins if r in inputs],
                ),
                start=1,
            ):
                if not chosen:
                    continue
                psels = ", ".join(_psel(p, pin_signal(group.peripheral, r, "psel")) for r, p in chosen)
                pull = "\t\tbias-pull-up;\n" if chosen[0][0] in inputs and state == "default" else ""
                parts.append(f"\tgroup{n} {{\n\t\tpsels = {psels};\n{pull}{extra}\t}};")
            name = f"rac_{label}_{state}"
            states.append(name)
            block = b.app.label_blocks.setdefault("pinctrl", [])
            node = f"{name}: {name} {{\n" + "\n".join(parts) + "\n};"
            if node not in block:
                block.append(node)
        b.app.okay(label, f"pinctrl-0 = <&{states[0]}>;", f"pinctrl-1 = <&{states[1]}>;",
                   'pinctrl-names = "default", "sleep";')  # fmt: skip
        return
    labels = [b.target.pinctrl_label(pin, pin_signal(group.peripheral, role, "af")) for role, pin, _ in pins]
    refs = " ".join(f"&{x}" for x in labels if x)
    b.app.okay(label, f"pinctrl-0 = <{refs}>;", 'pinctrl-names = "default";')


def _dma_entries(b: ZephyrBuilder, block: Devicetree) -> None:
    """``dmas``/``dma-names`` per peripheral in entry order, the controllers enabled."""
    per: dict[str, list[tuple[str, DmaRoute]]] = {}
    for entry, route in zip(block.dmas, dma_routes(b.target, block), strict=True):
        if isinstance(route, DmaRoute):
            per.setdefault(entry.peripheral, []).append((entry.direction, route))
            for node in route.nodes:
                b.app.okay(node)
    for peripheral, routes in per.items():
        label = node_label_of(peripheral, "af")
        for direction, route in routes:
            b.app.dma(label, direction, route.cells)


SECTION = SectionSpec(
    name="devicetree",
    model=Devicetree,
    family="devicetree",
    realizations={"zephyr": _zephyr},
    checks=(check,),
    codes=(UNKNOWN_DEVICE, UNKNOWN_BINDING, REQUIRED, INVALID, PINCTRL, DMA, DRIVER),
)
