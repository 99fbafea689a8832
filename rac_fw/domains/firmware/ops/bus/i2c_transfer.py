"""The ``i2c_transfer`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.ops.bus import Retries, Timeout
from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


class I2cTransfer(Operation):
    """Write ``write_bytes`` to (and/or read ``read_bytes`` from) a device register, write-then-read.

    ``register_index`` is the register index inside the external device (its own map), not a memory address.
    """

    op: Literal["i2c_transfer"]
    device: Name = Field(description="An i2c device declared in resources.devices.")
    register_index: int = Field(
        ge=0, le=0xFF, description="Device register index the transaction starts at (not an address)."
    )
    write_bytes: int = Field(default=0, ge=0, le=32, description="Payload bytes written after the index.")
    read_bytes: int = Field(default=1, ge=0, le=32, description="Bytes read back after a repeated start.")
    timeout_ms: Timeout = 100
    retries: Retries = 2
    interval_ms: int | None = Field(default=None, ge=1, le=3_600_000, description="Repeat period, or once.")


SPEC = OpSpec(
    model=I2cTransfer,
    family="bus",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="i2c", available=lambda t: has_dt_label(t, r"i2c\d*")),
        "espidf": Realization(template="bus"),
        "hal": Realization(template="ops"),
    },
)
