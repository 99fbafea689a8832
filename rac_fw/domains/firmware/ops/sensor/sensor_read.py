"""The ``sensor_read`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.sections.devicetree import DeviceNode, node_label, node_of
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.devicetree import Binding
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class SensorRead(Operation):
    """Fetch a sample from ``device`` then read ``channel``, with error handling, every ``interval_ms``."""

    op: Literal["sensor_read"]
    device: Name = Field(
        description="A board devicetree sensor node label, or a device in resources.devices that the plan's "
        "devicetree block describes (its compatible names the driver)."
    )
    channel: Literal[
        "ambient_temp",
        "die_temp",
        "humidity",
        "press",
        "accel_xyz",
        "gyro_xyz",
        "magn_xyz",
        "light",
        "voltage",
    ] = Field(description="Sensor channel (Zephyr SENSOR_CHAN_* in lowercase).")
    interval_ms: int = Field(default=1000, ge=1, le=3_600_000)
    sampling_hz: int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="Sampling frequency to set before the first read (SENSOR_ATTR_SAMPLING_FREQUENCY); "
        "None = the driver's default. Needs a driver that takes the attribute.",
    )
    burst: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Samples fetched per interval, one sampling period (1/sampling_hz) apart, and averaged: a "
        "FIFO read done as fetches in a loop. Needs sampling_hz when above 1.",
    )


#: Board devicetree node labels of on-chip sensors the Zephyr sensor API reads (die temperature, Vref, Vbat).
SENSOR_LABELS = ("die_temp", "temp", "vref", "vbat")


def _zephyr(b: ZephyrBuilder, index: int, op: SensorRead) -> dict[str, Any]:

    external = node_of(b.plan, op.device)
    if external is not None:
        return _external(b, op, *external)
    aliases = b.target.board.dt_aliases
    name = op.device
    dashed = name.replace("_", "-")
    # The plan's name as a node label or alias, else the label this SoC's devicetree gives that sensor.
    candidates = [aliases.get(dashed, name), aliases.get(f"{dashed}0", name), *SENSOR_SYNONYMS.get(name, ())]
    label = next((c for c in candidates if c in b.labels), name)
    if label not in b.labels:
        known = sorted(x for x in b.labels if x in SENSOR_LABELS)
        raise b.unsupported(
            f"operations[{index}].device",
            f"{name!r} is not a sensor node of {b.board} (the Zephyr lowering reads board sensor nodes "
            f"through their drivers); sensors: {', '.join(known) or 'none'}",
            [name],
            [
                Relaxation(
                    description=f"read {k}",
                    patch=[{"op": "replace", "path": ["operations", index, "device"], "value": k}],
                )
                for k in known[:3]
            ],
        )
    b.app.okay(label)
    b.app.includes.update({"zephyr/drivers/sensor.h", "zephyr/sys/atomic.h"})
    for symbol in SENSOR_DRIVER_KCONFIG.get(label, ()):
        b.app.kconfig.setdefault(symbol, "sensor")
    if label in ("die_temp", "vref", "vbat") and b.target.adc is not None and b.target.adc.internal_channels:
        # These sensors are internal ADC channels on this chip: their driver samples through the ADC.
        b.app.kconfig.setdefault("CONFIG_ADC", "sensor")
    return {
        "node": label,
        "channel": f"SENSOR_CHAN_{op.channel.upper()}",
        "axes": 3 if op.channel.endswith("_xyz") else 1,
        "sampling_hz": None,
        "burst": op.burst,
        "spacing_us": _spacing_us(op),
        "setup": True,
        "step": {"period_ms": op.interval_ms},
    }


def _external(b: ZephyrBuilder, op: SensorRead, node: DeviceNode, facts: Binding) -> dict[str, Any]:
    """A device the devicetree block adds: its node label, its driver and the attribute to set first."""
    b.app.includes.update({"zephyr/drivers/sensor.h", "zephyr/sys/atomic.h"})
    b.app.need("sensor", *facts.kconfig)
    return {
        "node": node_label(node.device),
        "channel": f"SENSOR_CHAN_{op.channel.upper()}",
        "axes": 3 if op.channel.endswith("_xyz") else 1,
        "sampling_hz": op.sampling_hz,
        "burst": op.burst,
        "spacing_us": _spacing_us(op),
        "setup": True,
        "step": {"period_ms": op.interval_ms},
    }


def served_channel(device: str, node: DeviceNode, facts: Binding, channel: str, path: Path) -> list[Evidence]:
    """E_SENSOR_CHANNEL: the one rule for a channel of an external sensor, whatever reads it (``sensor_read``,
    ``sensor_trigger``): its driver must fill it (binding facts)."""
    if channel in facts.channels:
        return []
    return [
        violation(
            CHANNEL,
            f"the {node.compatible} driver fills {', '.join(facts.channels)}, not {channel}",
            path,
            [device, node.compatible, channel],
            relaxations=[relax(f"read {c}", replace(path, c)) for c in facts.channels],
        )
    ]


def _served(plan: Plan, target: Target, framework: str, index: int, op: SensorRead) -> list[Evidence]:
    """An external sensor's channel and sampling frequency must be what its driver serves."""

    where: list[str | int] = ["operations", index]
    external = node_of(plan, op.device)
    if external is None:
        if op.sampling_hz is None:
            return []
        return [
            violation(
                ATTRIBUTE,
                f"{op.device} is a board sensor node; the plan states no driver taking a sampling frequency",
                [*where, "sampling_hz"],
                [op.device, "sampling_frequency"],
                relaxations=[relax("keep the driver's sampling rate", remove([*where, "sampling_hz"]))],
            )
        ]
    node, facts = external
    found = served_channel(op.device, node, facts, op.channel, [*where, "channel"])
    asked = op.sampling_hz
    if asked is not None and asked not in facts.sampling_hz:
        rates = facts.sampling_hz if "sampling_frequency" in facts.attributes else ()
        nearest = sorted(rates, key=lambda r: abs(r - asked))[:2]
        found.append(
            violation(
                ATTRIBUTE,
                f"the {node.compatible} driver "
                + (f"samples at {', '.join(map(str, rates))} Hz" if rates else "takes no sampling frequency")
                + f"; {op.name or op.device} asks {asked} Hz",
                [*where, "sampling_hz"],
                [op.device, node.compatible, "sampling_frequency"],
                [measure("requested", asked, "Hz")],
                [relax(f"sample at {r} Hz", replace([*where, "sampling_hz"], r)) for r in nearest]
                + [relax("keep the driver's sampling rate", remove([*where, "sampling_hz"]))],
            )
        )
    return found


CHANNEL = "E_SENSOR_CHANNEL"
ATTRIBUTE = "E_SENSOR_ATTRIBUTE"
BURST = "E_SENSOR_BURST"


def _spacing_us(op: SensorRead) -> int:
    """Time between two samples of a burst: one sampling period."""
    return 1_000_000 // op.sampling_hz if op.sampling_hz else 0


def _burst(plan: Plan, target: Target, framework: str, index: int, op: SensorRead) -> list[Evidence]:
    """A burst needs a sampling period to space its samples, and must end before the next read starts."""
    if op.burst == 1:
        return []
    where: list[str | int] = ["operations", index]
    single = relax("read one sample per interval", replace([*where, "burst"], 1))
    if op.sampling_hz is None:
        return [
            violation(
                BURST,
                f"{op.name or op.device} fetches {op.burst} samples per read but states no sampling frequency to "
                "space them by",
                [*where, "sampling_hz"],
                [op.name or op.device, "burst", "sampling_hz"],
                relaxations=[single],
            )
        ]
    span_us = (op.burst - 1) * _spacing_us(op)
    if span_us < op.interval_ms * 1000:
        return []
    fits = max(1, (op.interval_ms * 1000 - 1) // _spacing_us(op) + 1)
    longer = span_us // 1000 + 1
    return [
        violation(
            BURST,
            f"{op.burst} samples at {op.sampling_hz} Hz take {span_us / 1000:g} ms, not less than the "
            f"{op.interval_ms} ms read interval",
            [*where, "burst"],
            [op.name or op.device, "burst", "interval_ms"],
            [measure("burst_span", span_us / 1000, "ms"), measure("interval", op.interval_ms, "ms")],
            [relax(f"fetch {fits} samples per read", replace([*where, "burst"], fits)),
             relax(f"read every {longer} ms", replace([*where, "interval_ms"], longer))],
        )
    ]


def _available(target: Target) -> bool:
    """Board sensor nodes, or a bus an external sensor node can sit on."""
    return has_dt_label(target, *SENSOR_LABELS, r"i2c\d*", r"spi\d*")


#: A plan's sensor name → the node labels Zephyr's SoC devicetrees give that sensor, in preference
#: order: the die temperature sensor is ``die_temp`` (``st,stm32-temp-cal``) on STM32 and ``temp``
#: (``nordic,nrf-temp``) on nRF52.
SENSOR_SYNONYMS: dict[str, tuple[str, ...]] = {"die_temp": ("die_temp", "temp"), "temp": ("temp", "die_temp")}
#: Sensor node label → driver Kconfig symbols beyond CONFIG_SENSOR. ``TEMP_NRF5`` (drivers/sensor/nordic/
#: temp/Kconfig) defaults to y once the node is enabled; naming it makes a missing driver a Kconfig error.
SENSOR_DRIVER_KCONFIG: dict[str, tuple[str, ...]] = {"temp": ("CONFIG_TEMP_NRF5",)}


SPEC = OpSpec(
    model=SensorRead,
    family="sensor",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="sensor", view=_zephyr, available=_available),
    },
    checks=(_served, _burst),
    codes=(CHANNEL, ATTRIBUTE, BURST),
)
