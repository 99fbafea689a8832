"""Binding facts of the external devices a plan's ``devicetree:`` block may add (``bindings.yaml``).

A binding says what a devicetree node of one ``compatible`` must and may carry: the buses its driver
binds on, its properties (type, required, allowed values), the phandle-array property wiring the
device's interrupt output to a GPIO, and what the Zephyr driver then serves (sensor channels,
triggers, attributes) with the Kconfig symbols it needs. The facts are harvested from Zephyr's
``dts/bindings`` YAML and the drivers' Kconfig (sources cited in the data file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

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
