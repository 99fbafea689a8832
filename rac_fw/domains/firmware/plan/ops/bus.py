"""I2C and SPI register transactions to a named device, with finite timeouts and retries."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name

Timeout = Annotated[int, Field(ge=1, le=10_000, description="Per-attempt bus timeout in milliseconds.")]
Retries = Annotated[int, Field(ge=0, le=10, description="Extra attempts after a bus error/NACK/timeout.")]


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
