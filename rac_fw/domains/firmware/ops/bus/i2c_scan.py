"""The ``i2c_scan`` operation: probe every address of an I2C bus once and report which devices answer.

Realized the way Zephyr's own i2c shell scans (drivers/i2c/i2c_shell.c, ``cmd_i2c_scan``): an empty write
(address + STOP) per address, a device ACKing its address. The range defaults to the addresses the I2C
specification leaves to devices (UM10204 §3.1.12: 0x00-0x07 and 0x78-0x7F are reserved).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from rac_fw.domains.firmware.facts.query import dt_labels, has_dt_label
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import relax, replace, violation
from rac_fw.domains.firmware.plan.fields import PeripheralName
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: UM10204 §3.1.12: the 7-bit addresses left to devices.
FIRST_DEVICE_ADDRESS = 0x08
LAST_DEVICE_ADDRESS = 0x77


class I2cScan(Operation):
    """Probe each 7-bit address from ``first`` to ``last`` on an I2C controller once; print those that ACK.

    The count of devices found is the operation's value (a ``log`` may print it).
    """

    op: Literal["i2c_scan"]
    controller: PeripheralName = Field(description="I2C controller instance, e.g. I2C1, TWIM0.")
    first: int = Field(default=FIRST_DEVICE_ADDRESS, ge=FIRST_DEVICE_ADDRESS, le=LAST_DEVICE_ADDRESS)
    last: int = Field(default=LAST_DEVICE_ADDRESS, ge=FIRST_DEVICE_ADDRESS, le=LAST_DEVICE_ADDRESS)

    @model_validator(mode="after")
    def _range(self) -> I2cScan:
        if self.first > self.last:
            raise ValueError(f"first (0x{self.first:02x}) is above last (0x{self.last:02x})")
        return self


def _label(target: Target, controller: str) -> str | None:
    """The board devicetree label of an I2C controller (``I2C1`` → ``i2c1``, ``TWIM0`` → ``i2c0``)."""
    lower = controller.lower()
    labels = dt_labels(target)
    return next((c for c in (lower, re.sub(r"^(twim|twi)", "i2c", lower)) if c in labels), None)


def _controller(plan: Plan, target: Target, framework: str, index: int, op: I2cScan) -> list[Evidence]:
    """The controller must be an I2C node the board's devicetree enables."""

    if framework != "zephyr" or _label(target, op.controller) is not None:
        return []
    enabled = sorted(x for x in dt_labels(target) if re.fullmatch(r"i2c\d+", x))
    return [
        violation(
            "E_NO_PERIPHERAL",
            f"{op.controller} is not an I2C controller of the {target.board.name} devicetree; "
            f"enabled: {', '.join(enabled) or 'none'}",
            ["operations", index, "controller"],
            [op.controller, target.board.name],
            relaxations=[
                relax(f"scan {e.upper()}", replace(["operations", index, "controller"], e.upper())) for e in enabled[:3]
            ],
        )
    ]


def _zephyr(b: ZephyrBuilder, index: int, op: I2cScan) -> dict[str, Any]:
    label = _label(b.target, op.controller)
    if label is None:  # refused by the obligation above
        raise b.unsupported(f"operations[{index}].controller", f"{op.controller} is not enabled", [op.controller], [])
    b.app.okay(label)
    b.app.need("i2c")
    b.app.includes.update({"zephyr/drivers/i2c.h", "zephyr/sys/atomic.h"})
    return {
        "bus": label,
        "first": f"0x{op.first:02x}",
        "last": f"0x{op.last:02x}",
        "setup": True,
        "step": {"period_ms": None},
    }


SPEC = OpSpec(
    model=I2cScan,
    family="bus",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="i2c_scan", view=_zephyr, available=lambda t: has_dt_label(t, r"i2c\d+"))
    },
    checks=(_controller,),
    codes=("E_NO_PERIPHERAL",),
)
