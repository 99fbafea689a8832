"""The ``sensor_trigger`` operation: an external sensor's data-ready trigger, sampled in its handler.

Its own obligation (``E_SENSOR_TRIGGER``): the device's driver must raise the trigger (binding facts)
and the devicetree block must wire the device's interrupt output to a GPIO — without it the driver's
trigger Kconfig (``LIS2DH_TRIGGER_GLOBAL_THREAD`` depends on a node having ``irq-gpios``) cannot be set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.devicetree import bindings
from rac_fw.domains.firmware.facts.query import free_pins, has_dt_label
from rac_fw.domains.firmware.ops.sensor.sensor_read import SensorRead
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import add, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.sections.devicetree import node_label, node_of
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
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
    trigger: Literal["data_ready"] = Field(default="data_ready", description="SENSOR_TRIG_* in lowercase.")
    channel: Literal[
        "ambient_temp", "die_temp", "humidity", "press", "accel_xyz", "gyro_xyz", "magn_xyz", "light", "voltage"
    ] = Field(description="Channel read in the handler (Zephyr SENSOR_CHAN_* in lowercase).")  # fmt: skip
    sampling_hz: int | None = Field(
        default=None, ge=1, le=100_000, description="Sampling frequency set before the trigger is armed (Hz)."
    )
    report_ms: int = Field(default=1000, ge=1, le=3_600_000, description="How often the event count is printed.")


TRIGGER = "E_SENSOR_TRIGGER"


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
    return []


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
        "setup": True,
        "step": {"period_ms": op.report_ms},
    }


SPEC = OpSpec(
    model=SensorTrigger,
    family="sensor",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(
            template="sensor", view=_zephyr, available=lambda t: has_dt_label(t, r"i2c\d*", r"spi\d*")
        )
    },
    checks=(_wired,),
    codes=(TRIGGER,),
)
