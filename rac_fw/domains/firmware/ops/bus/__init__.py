"""I2C and SPI register transactions to a named device, with finite timeouts and retries.

This package holds one op spec per module; shared field types live here."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

Timeout = Annotated[
    int,
    Field(
        ge=1,
        le=10_000,
        description="Per-attempt bus timeout in ms, where the framework's bus call takes one (STM32 HAL; ESP-IDF "
        "I2C); Zephyr's drivers bound each transfer themselves, so setting it there is refused.",
    ),
]


Retries = Annotated[int, Field(ge=0, le=10, description="Extra attempts after a bus error/NACK/timeout.")]
