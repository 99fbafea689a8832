"""The ``sensor_trigger`` operation: an external sensor's data-ready or threshold trigger, sampled in its handler.

Its own obligations:

* ``E_SENSOR_TRIGGER`` — the device's driver must raise the trigger (binding facts), the devicetree block
  must wire the device's interrupt output to a GPIO (without it the driver's trigger Kconfig,
  ``LIS2DH_TRIGGER_GLOBAL_THREAD``, depends on a node having ``irq-gpios``), and a trigger the driver
  routes to another line must be routed to the wired one (LIS2DH any-motion: ``anym-on-int1``).
* ``E_SENSOR_THRESHOLD`` — a ``delta`` (threshold) trigger's slope threshold and duration must be attributes
  the driver takes, within its range (LIS2DH: at most the ±2 g full scale, 19.6133 m/s², and 127 samples);
  relaxations: the limit, or the driver's default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.devicetree import bindings
from rac_fw.domains.firmware.facts.query import free_pins, has_dt_label
from rac_fw.domains.firmware.ops.sensor.sensor_read import CHANNEL, SensorRead, served_channel
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import add, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.sections.devicetree import node_label, node_of
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.devicetree import Binding
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class SensorTrigger(Operation):
    """On each ``trigger`` of an external sensor, fetch a sample and keep ``channel``; log the event count.

    ``device`` is a device the plan's devicetree block describes with its interrupt wired. The handler runs
    in the driver's trigger thread (thread context), so it may fetch; ``report_ms`` is how often the count
    of events so far is printed.
    """

    op: Literal["sensor_trigger"]
    device: Name = Field(description="A device in resources.devices that the devicetree block describes.")
    trigger: Literal["data_ready", "delta"] = Field(
        default="data_ready",
        description="SENSOR_TRIG_* in lowercase: data_ready (each new sample) or delta (the channel changed "
        "by more than slope_threshold for slope_duration samples: any-motion).",
    )
    channel: Literal[
        "ambient_temp", "die_temp", "humidity", "press", "accel_xyz", "gyro_xyz", "magn_xyz", "light", "voltage"
    ] = Field(description="Channel read in the handler (Zephyr SENSOR_CHAN_* in lowercase).")  # fmt: skip
    sampling_hz: int | None = Field(
        default=None, ge=1, le=100_000, description="Sampling frequency set before the trigger is armed (Hz)."
    )
    report_ms: int = Field(default=1000, ge=1, le=3_600_000, description="How often the event count is printed.")
    slope_threshold: float | None = Field(
        default=None, gt=0, le=1000, description="delta: change that raises the trigger, in channel units (m/s²)."
    )
    slope_duration: int | None = Field(
        default=None, ge=0, le=255, description="delta: samples the change must last (SENSOR_ATTR_SLOPE_DUR)."
    )


TRIGGER = "E_SENSOR_TRIGGER"
THRESHOLD = "E_SENSOR_THRESHOLD"


def _free_gpio(plan: Plan, target: Target) -> str | None:
    """The GPIO the shared free-pin rule suggests first, beside what the plan already takes."""
    taken = {p.pin for p in plan.resources.pins} | {d.chip_select for d in plan.resources.devices if d.chip_select}
    if plan.devicetree is not None:
        taken |= {n.interrupt for n in plan.devicetree.nodes if n.interrupt}
    found = free_pins(target, taken, "GPIO")
    return found[0].name if found else None


def _wired(plan: Plan, target: Target, framework: str, index: int, op: SensorTrigger) -> list[Evidence]:

    where: list[str | int] = ["operations", index]
    poll = SensorRead(op="sensor_read", name=op.name, device=op.device, channel=op.channel, sampling_hz=op.sampling_hz)
    instead = relax("read it periodically instead", replace(where, poll.model_dump(exclude_none=True)))
    external = node_of(plan, op.device)
    if external is None and plan.devicetree is not None and any(n.device == op.device for n in plan.devicetree.nodes):
        return []  # the block has its node, with a compatible rac-fw has no facts for: E_DT_BINDING_UNKNOWN says so
    if external is None:
        device = plan.device(op.device)
        pin = _free_gpio(plan, target)
        fitting = [b for b in bindings().values() if op.trigger in b.triggers and device and device.bus in b.buses]
        proposed = {"device": op.device, "compatible": fitting[0].compatible, "interrupt": pin} if fitting else None
        describe = []
        if proposed is not None and pin is not None:
            patch = (
                add(["devicetree", "nodes", -1], proposed)
                if plan.devicetree is not None
                else add(["devicetree"], {"nodes": [proposed]})
            )
            describe = [relax(f"describe {op.device} as {proposed['compatible']} with its interrupt on {pin}", patch)]
        return [
            violation(
                TRIGGER,
                f"{op.device} has no node in the devicetree block: its interrupt wiring and driver are unknown",
                [*where, "device"],
                [op.device, op.trigger],
                relaxations=[*describe, instead],
            )
        ]
    node, facts = external
    if op.trigger not in facts.triggers:
        return [
            violation(
                TRIGGER,
                f"the {node.compatible} driver raises no {op.trigger} trigger"
                + (f" (it raises {', '.join(facts.triggers)})" if facts.triggers else ""),
                [*where, "trigger"],
                [op.device, node.compatible, op.trigger],
                relaxations=[instead],
            )
        ]
    if node.interrupt is None:
        index_of = plan.devicetree.nodes.index(node) if plan.devicetree else 0
        pin = _free_gpio(plan, target)
        wire = [relax(f"wire {facts.interrupt} to {pin}", add(["devicetree", "nodes", index_of, "interrupt"], pin))]
        return [
            violation(
                TRIGGER,
                f"{op.device}'s {facts.interrupt} is not wired: the {op.trigger} trigger needs the device's "
                "interrupt output on a GPIO (devicetree.nodes[].interrupt)",
                ["devicetree", "nodes", index_of, "interrupt"],
                [op.device, facts.interrupt or "interrupt", op.trigger],
                relaxations=[*(wire if pin else []), instead],
            )
        ]
    node_index = plan.devicetree.nodes.index(node) if plan.devicetree else 0
    routing = facts.trigger_routing.get(op.trigger)
    if routing is not None and node.properties.get(routing) is not True:
        return [
            violation(
                TRIGGER,
                f"the {node.compatible} driver raises {op.trigger} on its second interrupt line; only "
                f"{facts.interrupt} INT1 is wired ({node.interrupt}), so {routing} must route it there",
                ["devicetree", "nodes", node_index, "properties"],
                [op.device, node.compatible, routing, op.trigger],
                relaxations=[
                    relax(f"set {routing}", add(["devicetree", "nodes", node_index, "properties", routing], True))
                ],
            )
        ]
    return _threshold(op, node.compatible, facts, where)


def _channel(plan: Plan, target: Target, framework: str, index: int, op: SensorTrigger) -> list[Evidence]:
    """The channel kept on each trigger is one the driver fills (the same rule as ``sensor_read``'s)."""
    external = node_of(plan, op.device)
    if external is None:
        return []
    node, facts = external
    return served_channel(op.device, node, facts, op.channel, ["operations", index, "channel"])


def _threshold(op: SensorTrigger, compatible: str, facts: Binding, where: list[str | int]) -> list[Evidence]:
    """Slope threshold and duration: only for delta, only where the driver takes them, within its range."""
    found = []
    for field, attribute, limit, unit in (
        ("slope_threshold", "slope_th", facts.slope_th_max, "m/s2"),
        ("slope_duration", "slope_dur", facts.slope_dur_max, "samples"),
    ):
        value = getattr(op, field)
        if value is None:
            continue
        path = [*where, field]
        drop = relax(f"keep the driver's {attribute}", remove(path))
        if op.trigger != "delta" or attribute not in facts.attributes:
            why = (
                f"{field} only applies to a delta trigger; this one is {op.trigger}"
                if op.trigger != "delta"
                else f"the {compatible} driver takes no {attribute}"
            )
            found.append(violation(THRESHOLD, why, path, [op.device, attribute], relaxations=[drop]))
        elif limit is not None and value > limit:
            found.append(
                violation(
                    THRESHOLD,
                    f"the {compatible} driver accepts {attribute} up to {limit:g} {unit}; {op.name or op.device} asks "
                    f"{value:g}",
                    path,
                    [op.device, compatible, attribute],
                    [measure("requested", value, unit), measure("limit", limit, unit)],
                    [relax(f"use {limit:g} {unit}", replace(path, limit)), drop],
                )
            )
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: SensorTrigger) -> dict[str, Any]:
    external = node_of(b.plan, op.device)
    if external is None:  # the obligation refused this plan
        raise b.unsupported(f"operations[{index}].device", f"{op.device} has no devicetree node", [op.device], [])
    node, facts = external
    b.app.includes.update({"zephyr/drivers/sensor.h", "zephyr/sys/atomic.h"})
    b.app.need("sensor", *facts.kconfig, *facts.trigger_kconfig)
    b.app.need("gpio")
    return {
        "node": node_label(node.device),
        "channel": f"SENSOR_CHAN_{op.channel.upper()}",
        "trigger": f"SENSOR_TRIG_{op.trigger.upper()}",
        "sampling_hz": op.sampling_hz,
        "slope_th": _sensor_value(op.slope_threshold),
        "slope_dur": op.slope_duration,
        "setup": True,
        "step": {"period_ms": op.report_ms},
    }


def _sensor_value(value: float | None) -> tuple[int, int] | None:
    """``struct sensor_value`` parts (integer, millionths) of a plan quantity."""
    if value is None:
        return None
    micro = round(value * 1_000_000)
    return micro // 1_000_000, micro % 1_000_000


SPEC = OpSpec(
    model=SensorTrigger,
    family="sensor",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(
            template="sensor", view=_zephyr, available=lambda t: has_dt_label(t, r"i2c\d*", r"spi\d*")
        )
    },
    checks=(_wired, _channel),
    codes=(TRIGGER, THRESHOLD, CHANNEL),
)
