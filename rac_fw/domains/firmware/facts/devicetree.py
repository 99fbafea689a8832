"""Binding facts of the external devices a plan's ``devicetree:`` block may add (``bindings.yaml``).

A binding says what a devicetree node of one ``compatible`` must and may carry: the buses its driver
binds on, its properties (type, required, allowed values), the phandle-array property wiring the
device's interrupt output to a GPIO, and what the Zephyr driver then serves (sensor channels,
triggers, attributes) with the Kconfig symbols it needs. The facts are harvested from Zephyr's
``dts/bindings`` YAML and the drivers' Kconfig (sources cited in the data file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml

from rac_fw.domains.firmware.facts.query import dmamux_line, dt_labels, serving_controllers

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

PropertyType = Literal["int", "string", "boolean"]


@dataclass(frozen=True)
class BindingProperty:
    """One property a binding declares beyond ``reg``."""

    name: str
    type: PropertyType
    required: bool = False
    """The node is invalid without it (``required: true`` in the binding)."""
    enum: tuple[int | str, ...] = ()
    """The values the binding allows (empty: any value of the type)."""


@dataclass(frozen=True)
class Binding:
    """What a node of one compatible carries and what its Zephyr driver serves."""

    compatible: str
    buses: tuple[str, ...]
    """Buses the driver binds on (``i2c``, ``spi``)."""
    properties: dict[str, BindingProperty] = field(default_factory=dict, hash=False)
    interrupt: str | None = None
    """The binding's phandle-array property for the device's interrupt output (``irq-gpios``)."""
    interrupt_active_low: bool = False
    """Polarity of the interrupt output as the binding documents it."""
    channels: tuple[str, ...] = ()
    """Sensor channels the driver fills (``SENSOR_CHAN_*`` in lowercase)."""
    triggers: tuple[str, ...] = ()
    """Sensor triggers the driver raises (``SENSOR_TRIG_*`` in lowercase), given the interrupt wiring."""
    attributes: tuple[str, ...] = ()
    """Sensor attributes the driver accepts at run time (``SENSOR_ATTR_*`` in lowercase)."""
    sampling_hz: tuple[int, ...] = ()
    """Sampling frequencies the device supports (when ``sampling_frequency`` is an attribute)."""
    trigger_routing: dict[str, str] = field(default_factory=dict, hash=False)
    """Trigger → the boolean property that routes it to the wired interrupt line (LIS2DH any-motion:
    ``anym-on-int1``); a trigger not listed uses the line the interrupt property wires first."""
    slope_th_max: float | None = None
    """Largest ``SENSOR_ATTR_SLOPE_TH`` the driver accepts (channel units: m/s² for acceleration)."""
    slope_dur_max: int | None = None
    """Largest ``SENSOR_ATTR_SLOPE_DUR`` (samples)."""
    kconfig: tuple[str, ...] = ()
    """The driver's Kconfig symbols."""
    trigger_kconfig: tuple[str, ...] = ()
    """Kconfig symbols the driver's trigger support needs."""

    @property
    def required(self) -> tuple[BindingProperty, ...]:
        return tuple(p for p in self.properties.values() if p.required)


def _binding(compatible: str, raw: dict[str, Any]) -> Binding:
    props = {
        name: BindingProperty(name, spec["type"], bool(spec.get("required", False)), tuple(spec.get("enum", ())))
        for name, spec in (raw.get("properties") or {}).items()
    }
    return Binding(
        compatible=compatible,
        buses=tuple(raw["buses"]),
        properties=props,
        interrupt=raw.get("interrupt"),
        interrupt_active_low=bool(raw.get("interrupt_active_low", False)),
        channels=tuple(raw.get("channels", ())),
        triggers=tuple(raw.get("triggers", ())),
        attributes=tuple(raw.get("attributes", ())),
        sampling_hz=tuple(raw.get("sampling_hz", ())),
        trigger_routing=dict(raw.get("trigger_routing") or {}),
        slope_th_max=raw.get("slope_th_max"),
        slope_dur_max=raw.get("slope_dur_max"),
        kconfig=tuple(raw.get("kconfig", ())),
        trigger_kconfig=tuple(raw.get("trigger_kconfig", ())),
    )


@cache
def bindings() -> dict[str, Binding]:
    """Every binding the data file carries, by compatible."""
    raw = yaml.safe_load((Path(__file__).with_name("bindings.yaml")).read_text(encoding="utf-8"))
    return {compatible: _binding(compatible, entry) for compatible, entry in raw.items()}


def binding(compatible: str) -> Binding | None:
    return bindings().get(compatible)


# --- pin control -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PeripheralKind:
    """How a kind of peripheral names its pin signals and its devicetree node.

    STM32 (pins routed by alternate function) spells a signal ``<INSTANCE>_<ROLE>`` (``USART1_TX``), the
    pin data's own spelling, and Zephyr's pinctrl label is derived from it (``Target.pinctrl_label``).
    nRF (pins routed by PSEL registers) takes any pin for any role: the overlay names the role with the
    ``NRF_PSEL`` function (``UART_TX``, include/zephyr/dt-bindings/pinctrl/nrf-pinctrl.h) in a group of
    the ``&pinctrl`` node, and the node label is the Zephyr one (``uart1`` for UARTE1, ``i2c0`` for TWIM0).
    """

    kind: str
    pattern: str
    """Instance names of this kind, with the instance number as group 2 (``^(USART|UART|UARTE)(\\d+)$``)."""
    roles: tuple[str, ...]
    required: tuple[str, ...]
    """Roles a pin group must give (a UART transmits, I2C needs both lines, CAN both)."""
    inputs: tuple[str, ...]
    """Roles that are inputs (nRF: a separate group with ``bias-pull-up``, as the DK's DTS does for RX)."""
    psel: dict[str, str] = field(default_factory=dict, hash=False)
    """Role → the ``NRF_PSEL`` function; empty when the kind has no PSEL routing."""
    psel_label: str = ""
    """The Zephyr nRF node label, ``{n}`` the instance number (``uart{n}``)."""


PERIPHERAL_KINDS = (
    PeripheralKind(
        "uart", r"^(USART|UART|LPUART|UARTE)(\d+)$", ("tx", "rx", "rts", "cts"), ("tx",), ("rx", "cts"),
        {"tx": "UART_TX", "rx": "UART_RX", "rts": "UART_RTS", "cts": "UART_CTS"}, "uart{n}",
    ),
    PeripheralKind(
        "i2c", r"^(I2C|TWIM|TWI)(\d+)$", ("scl", "sda"), ("scl", "sda"), (),
        {"scl": "TWIM_SCL", "sda": "TWIM_SDA"}, "i2c{n}",
    ),
    PeripheralKind(
        "spi", r"^(SPI|SPIM)(\d+)$", ("sck", "miso", "mosi", "nss"), ("sck",), ("miso",),
        {"sck": "SPIM_SCK", "miso": "SPIM_MISO", "mosi": "SPIM_MOSI"}, "spi{n}",
    ),
    PeripheralKind("can", r"^(CAN|FDCAN)(\d+)$", ("tx", "rx"), ("tx", "rx"), ("rx",)),
)  # fmt: skip


def peripheral_kind(instance: str) -> tuple[PeripheralKind, int] | None:
    """The kind of peripheral ``instance`` is and its instance number (``USART2`` → uart, 2)."""
    for kind in PERIPHERAL_KINDS:
        found = re.fullmatch(kind.pattern, instance)
        if found:
            return kind, int(found.group(2))
    return None


def pin_signal(instance: str, role: str, routing: str) -> str:
    """The signal a role of ``instance`` is on a pin routed by ``routing`` (``USART1_TX``; nRF ``UART_TX``)."""
    found = peripheral_kind(instance)
    if routing == "psel" and found is not None and role in found[0].psel:
        return found[0].psel[role]
    return f"{instance}_{role.upper()}"


def node_label_of(instance: str, routing: str) -> str:
    """The Zephyr node label of ``instance`` (``usart1``; on nRF ``uart1`` for UARTE1, ``i2c0`` for TWIM0)."""
    found = peripheral_kind(instance)
    if routing == "psel" and found is not None and found[0].psel_label:
        return found[0].psel_label.format(n=found[1])
    return instance.lower()


# --- DMA channels ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DmaRoute:
    """One ``dmas`` entry: the controller (or request multiplexer) node and its cells."""

    request: str
    controller: str
    """The DMA controller that moves the data (``DMA1``)."""
    stream: int
    """The controller's stream (channel) it occupies."""
    nodes: tuple[str, ...]
    """Controller / multiplexer node labels the overlay must enable."""
    cells: str
    """``<&dma1 5 4 STM32_DMA_PERIPH_RX STM32_DMA_FIFO_FULL>`` (st,stm32-dma-v1: stream, channel, config,
    features) or ``<&dmamux1 14 43 STM32_DMA_PERIPH_RX>`` (st,stm32-dmamux: mux channel, request line, config)."""


def dma_route(target: Target, request: str, taken: set[tuple[str, int]]) -> DmaRoute | str:
    """The route of ``request`` on a stream no other entry ``taken`` (controller, stream), or why there is none.

    A fixed request mapping gives (stream, channel) pairs; a request multiplexer gives the line and any
    stream of the controllers behind it, taken from the second-highest down (the highest is the console
    receiver's, ``console_rx_dma``). A controller without allocatable channels is the peripheral's own
    (nRF EasyDMA): it has no ``dmas`` property.
    """
    direction = "STM32_DMA_PERIPH_TX" if request.endswith("_TX") else "STM32_DMA_PERIPH_RX"
    known = dt_labels(target)
    controllers = serving_controllers(target, request)
    if any(c.channels == 0 for c in controllers):
        return f"{request} is served by the peripheral's own DMA (EasyDMA): its node takes no dmas"
    for controller in controllers:
        label = controller.name.lower()
        for stream, channel in controller.routes(request):
            if label in known and (controller.name, stream) not in taken:
                cells = f"<&{label} {stream} {channel} {direction} STM32_DMA_FIFO_FULL>"
                return DmaRoute(request, controller.name, stream, (label,), cells)
    mux = dmamux_line(target, request)
    if mux is not None:
        for controller in controllers:
            first = mux.first_channels.get(controller.name)
            labels = (controller.name.lower(), mux.mux.lower())
            if first is None or not set(labels) <= known:
                continue
            free = [s for s in range(controller.channels - 2, -1, -1) if (controller.name, s) not in taken]
            if free:
                cells = f"<&{labels[1]} {first + free[0]} {mux.line} {direction}>"
                return DmaRoute(request, controller.name, free[0], labels, cells)
    if not controllers:
        return f"no DMA controller of {target.id} serves {request}"
    return f"every stream that can carry {request} is taken"
