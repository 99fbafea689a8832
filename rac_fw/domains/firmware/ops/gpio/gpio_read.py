"""The ``gpio_read`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


class GpioRead(Operation):
    """Poll a button's logical level (active level already accounted for) every ``interval_ms``."""

    op: Literal["gpio_read"]
    button: Name = Field(description="Board button (name or label such as sw0) or a declared GPIO pin.")
    interval_ms: int = Field(default=100, ge=1, le=3_600_000, description="Polling period.")


SPEC = OpSpec(
    model=GpioRead,
    family="gpio",
    flags=frozenset({Flag.VALUE}),
    endpoints={"button": "button"},
    realizations={
        "zephyr": Realization(template="gpio"),
        "espidf": Realization(template="gpio"),
        "hal": Realization(template="ops"),
    },
)
