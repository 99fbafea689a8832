"""The ``spi_transfer`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.ops.bus import Retries, Timeout
from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


class SpiTransfer(Operation):
    """Full-duplex SPI transaction to a device: optional register index, then write/read payload."""

    op: Literal["spi_transfer"]
    device: Name = Field(description="An spi device declared in resources.devices.")
    register_index: int | None = Field(
        default=None, ge=0, le=0xFF, description="Device register index sent first, if any."
    )
    write_bytes: int = Field(default=0, ge=0, le=256)
    read_bytes: int = Field(default=1, ge=0, le=256)
    mode: Literal[0, 1, 2, 3] = Field(default=0, description="SPI mode (CPOL<<1 | CPHA).")
    timeout_ms: Timeout = 100
    retries: Retries = 2
    interval_ms: int | None = Field(default=None, ge=1, le=3_600_000, description="Repeat period, or once.")


SPEC = OpSpec(
    model=SpiTransfer,
    family="bus",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="spi", available=lambda t: has_dt_label(t, r"spi\d*")),
        "espidf": Realization(template="bus"),
        "hal": Realization(template="ops"),
    },
)
