"""The ``sensor_read`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Relaxation
from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class SensorRead(Operation):
    """Fetch a sample from ``device`` then read ``channel``, with error handling, every ``interval_ms``."""

    op: Literal["sensor_read"]
    device: Name = Field(description="A device declared in resources.devices, or a board devicetree node label.")
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


#: Board devicetree node labels of on-chip sensors the Zephyr sensor API reads (die temperature, Vref, Vbat).
SENSOR_LABELS = ("die_temp", "temp", "vref", "vbat")


def _zephyr(b: ZephyrBuilder, index: int, op: SensorRead) -> dict[str, Any]:

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
        "setup": True,
        "step": {"period_ms": op.interval_ms},
    }


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
        "zephyr": Realization(template="sensor", view=_zephyr, available=lambda t: has_dt_label(t, *SENSOR_LABELS)),
    },
)
