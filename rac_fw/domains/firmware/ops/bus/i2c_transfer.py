"""The ``i2c_transfer`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.ops.bus import (
    ACTIONS,
    ESPIDF_BEHAVIOUR,
    HAL_BEHAVIOUR,
    OUTPUTS,
    ZEPHYR_BEHAVIOUR,
    Retries,
    Timeout,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan


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


#: Zephyr: the pause before another attempt after a NACK or bus error. A device busy in its internal write
#: cycle (an I2C EEPROM: at most 5 ms, 24xx datasheets) NACKs until it is done.
RETRY_PAUSE_MS = 5


def _zephyr(b: ZephyrBuilder, index: int, op: I2cTransfer) -> dict[str, Any]:
    device, label = b.bus_device(index, op, "i2c")
    b.app.includes.add("zephyr/drivers/i2c.h")
    return {
        "bus": label,
        "address": f"0x{device.address:02x}",
        "register": f"0x{op.register_index:02x}",
        "write_bytes": op.write_bytes,
        "read_bytes": op.read_bytes,
        "attempts": op.retries + 1,
        "pause_ms": RETRY_PAUSE_MS,
        "setup": True,
        "step": {"period_ms": op.interval_ms},
        "outputs": {"rx": f"{b.ids[index]}_rx"},
    }


def _espidf(b: EspIdfBuild, index: int, op: I2cTransfer) -> dict[str, Any]:
    where = f"operations[{index}]"
    device = b.plan.device(op.device)
    if device is None or device.bus != "i2c":
        raise b.unsupported(f"{where}.device", f"{op.device!r} is not an i2c device")
    port = b.port(device.controller, where)
    sda = b.signal_pin(f"{device.controller}_SDA", where)
    scl = b.signal_pin(f"{device.controller}_SCL", where)
    b.i2c_buses.setdefault(port, {"port": port, "sda": sda, "scl": scl, "devices": {}})
    b.i2c_buses[port]["devices"][device.name] = {"name": device.name, "address": device.address,
                                                 "hz": device.frequency_hz}  # fmt: skip
    return {"device": device.name, "port": port, "task": b.thread(None, b.symbol(index, op)),
            "outputs": {"rx": f"{b.symbol(index, op)}_in"},
            # Its first report comes after its first transfer: every attempt may take the whole timeout.
            "report_within_ms": (op.retries + 1) * op.timeout_ms + 1000}


def _hal(b: HalBuild, index: int, op: I2cTransfer) -> dict[str, Any]:
    view = b.base_view(index, op)
    view["address"] = b.bus_view(view, op, "i2c", f"operations[{index}]").address
    view["outputs"] = {"rx": f"{view['sym']}_in"}  # filled by the behaviour's `transfer` (its `behaviour` part)
    return view


def _names(plan: Plan, target: Target, framework: str, index: int, op: I2cTransfer) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: ``device`` must be an I2C device of ``resources.devices``."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    refs.device(op.device, [*base, "device"], "i2c")
    return refs.found

SPEC = OpSpec(
    model=I2cTransfer,
    family="bus",
    flags=frozenset({Flag.VALUE}),
    value=lambda op: op.read_bytes > 0,
    value_fix=("read_bytes", 1),
    outputs=OUTPUTS,
    actions=ACTIONS,
    realizations={
        "zephyr": Realization(
            template="i2c",
            view=_zephyr,
            available=lambda t: has_dt_label(t, r"i2c\d*"),
            why_unavailable=lambda t: f"the {t.id} board devicetree enables no i2c controller node (i2cN)",
            unrealized={
                "timeout_ms": "Zephyr's I2C API takes no per-transfer timeout (i2c_write_read_dt): the "
                "controller driver bounds each transfer itself"
            },
            quiet=True,
            behaviour=ZEPHYR_BEHAVIOUR,
        ),
        "espidf": Realization(template="bus", view=_espidf, quiet=True, behaviour=ESPIDF_BEHAVIOUR),
        "hal": Realization(template="ops", view=_hal, quiet=True, behaviour=HAL_BEHAVIOUR),
    },
    checks=(_names,),
    codes=("E_UNKNOWN_RESOURCE",),
)
