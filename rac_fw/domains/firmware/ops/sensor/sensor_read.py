"""The ``sensor_read`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


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


SPEC = OpSpec(
    model=SensorRead,
    family="sensor",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="sensor", available=lambda t: has_dt_label(t, *SENSOR_LABELS)),
    },
)
