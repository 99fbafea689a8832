"""I2C and SPI register transactions to a named device, with finite timeouts and retries.

This package holds one op spec per module; shared field types, and what a behaviour may do with a
transaction (``act: {op: dev, action: transfer, args: {tx: …}, into: rx}``), live here."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from rac_fw.domains.firmware.plan.spec import Action, ActionParam, Output

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


#: A behaviour's transaction: its payload and what it read back (``read_bytes`` of the operation).
OUTPUTS = {"rx": Output("bytes", "The bytes the last `transfer` read back.", size=lambda op: op.read_bytes,
                        ready="action")}
ACTIONS = {"transfer": Action(
    "Send the register index (if any) and `tx` (at most write_bytes; the rest zero), read read_bytes into `rx`; "
    "waits for the bus, with the operation's retries.",
    params={"tx": ActionParam("payload", "the bytes to write", required=False)},
    updates=("rx",), blocking=True, fails=True)}  # fmt: skip
#: The Zephyr realizations' behaviour features (templates/zephyr/i2c.c.j2 and spi.c.j2: `_transfer`).
ZEPHYR_BEHAVIOUR = frozenset({"action:transfer", "output:rx"})
#: The ESP-IDF realizations' (templates/espidf/bus.c.j2: `_transfer` with its own buffers).
ESPIDF_BEHAVIOUR = frozenset({"action:transfer", "output:rx"})
#: The STM32 HAL realizations' (templates/hal/ops.c.j2: the `_transfer` helpers, `<op>_act_transfer`).
HAL_BEHAVIOUR = frozenset({"action:transfer", "output:rx"})
