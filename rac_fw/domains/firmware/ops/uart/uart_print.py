"""The ``uart_print`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import console_uart_known
from rac_fw.domains.firmware.ops.uart import Baud, UartInstance, baud_error
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_format, c_string
from rac_fw.domains.firmware.plan.fields import Message
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class UartPrint(Operation):
    """Print ``message`` plus a newline with polled (blocking, thread-context) output."""

    op: Literal["uart_print"]
    uart: UartInstance = None
    message: Message
    baud: Baud = None
    repeat_interval_ms: int | None = Field(
        default=None, ge=1, le=3_600_000, description="Reprint every interval; None = print once."
    )


def _zephyr(b: ZephyrBuilder, index: int, op: UartPrint) -> dict[str, Any]:
    return {
        "node": b.uart_node(index, op),
        "message": c_format(op.message),
        "setup": True,
        "step": {"period_ms": op.repeat_interval_ms},
    }


def _espidf(b: EspIdfBuild, index: int, op: UartPrint) -> dict[str, Any]:
    return {"uart": b.uart(op.uart, op.baud, f"operations[{index}]"), "message": c_format(op.message + "\n"),
            "task": b.thread(None, b.symbol(index, op))}  # fmt: skip


def _hal(b: HalBuild, index: int, op: UartPrint) -> dict[str, Any]:
    view = b.base_view(index, op)
    view["uart"] = b.uart(op.uart, op.baud, f"operations[{index}]")
    view["message"] = c_format(op.message + "\r\n")
    view["text_bytes"] = len(op.message) + len("\r\n") + 1
    return view


def _baremetal(b: BaremetalBuild, index: int, op: UartPrint) -> None:
    driver = b.uart_of(op.uart, op.baud)
    ctx = b.base(index, op) | {
        "message_literal": c_string(op.message),
        "putc": driver["putc"],
        "init": driver["init"],
        "inst": driver["inst"],
        "baud": driver["rate"],
        "interval_ms": op.repeat_interval_ms,
    }
    b.emit("ops/uart_print", ctx)


def _instance(plan: Plan, target: Target, framework: str, index: int, op: UartPrint) -> list[Evidence]:
    """A named UART must exist and have its pins declared (it only transmits: its TX pin);
    the shared rule is the peripherals concern's."""
    from rac_fw.domains.firmware.obligations.peripherals import uart_named  # runs after the plan model exists

    return uart_named(plan, target, index, op, needs_rx=False)

SPEC = OpSpec(
    model=UartPrint,
    family="uart",
    flags=frozenset({Flag.CONSOLE}),
    realizations={
        "zephyr": Realization(template="uart", view=_zephyr, available=console_uart_known),
        "espidf": Realization(template="uart", view=_espidf),
        "hal": Realization(template="ops", view=_hal, quiet=lambda op: op.repeat_interval_ms is None),
        "baremetal": Realization(template="ops/uart_print", view=_baremetal),
    },
    checks=(_instance, baud_error),
    codes=("E_NO_PERIPHERAL", "E_UNKNOWN_RESOURCE", "E_BAUD_ERROR"),
)
