"""The ``uart_rx_irq`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import console_uart_known
from rac_fw.domains.firmware.ops.uart import UART_DRAIN_MS, Baud, UartInstance, baud_error, zephyr_uart_mode
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import IrqPriority
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Output, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class UartRxIrq(Operation):
    """Receive bytes in the UART interrupt into a ring buffer of ``ring_bytes``; optionally echo them."""

    op: Literal["uart_rx_irq"]
    uart: UartInstance = None
    ring_bytes: int = Field(ge=8, le=4096, description="Receive ring capacity in bytes (power of two best).")
    echo: bool = Field(default=False, description="Send each received byte back (from thread context).")
    baud: Baud = None
    irq_priority: IrqPriority | None = None

    THREAD_EVENTS: ClassVar[frozenset[str]] = frozenset({"line"})
    """``line`` is raised where the loop drains the ring (thread context), not in the interrupt handler."""


def _zephyr(b: ZephyrBuilder, index: int, op: UartRxIrq) -> dict[str, Any]:

    view = b.uart_rx(index, op)
    handoffs = b.handoffs(index)
    view.update(
        ring_bytes=op.ring_bytes,
        echo=op.echo,
        handoffs=handoffs,
        setup=True,
        # Without a handoff thread the main loop drains (and echoes) the ring.
        step=None if handoffs else {"period_ms": UART_DRAIN_MS},
    )
    return view


def _espidf(b: EspIdfBuild, index: int, op: UartRxIrq) -> dict[str, Any]:
    sym, where = b.symbol(index, op), f"operations[{index}]"
    uart = b.uart(op.uart, op.baud, where, rx_ring=op.ring_bytes)
    if uart.setdefault("reader", sym) != sym:
        raise b.unsupported(where, f"UART{uart['port']} is already read by {uart['reader']}")
    return {"uart": uart, "task": b.thread(None, sym)}


def _hal(b: HalBuild, index: int, op: UartRxIrq) -> dict[str, Any]:
    view = b.base_view(index, op)
    b.uart_rx_view(view, op, op.ring_bytes, f"operations[{index}]")
    return view


def _baremetal(b: BaremetalBuild, index: int, op: UartRxIrq) -> None:
    driver = b.uart_of(op.uart, op.baud)
    if driver["rx_pin"] is None:
        raise b.error(f"{driver['inst']} has no RX pin (add {driver['inst']}_RX to resources.pins)")
    irq, handler = b.irq(driver["inst"])
    ring = 1 << max(3, (op.ring_bytes - 1).bit_length())
    from rac_fw.domains.firmware.plan.behaviour.lowering import program  # the plan model exists by now

    hooks = b.hooks(index, "line")
    found = program(b.plan, b.target, "baremetal")
    lines = bool(hooks) or (found is not None and "line" in found.outputs.get(index, []))
    ctx = (
        b.base(index, op)
        | {key: driver[key] for key in ("inst", "putc", "init", "m", "layout")}
        | {
            "status": driver.get("status"),
            "rx": driver.get("rx"),
            "irq": irq,
            "handler": handler,
            "priority": b.priority(op.irq_priority),
            "ring": ring,
            "echo": op.echo,
            "window_ms": b.RX_WINDOW_MS,
            "window_budget": b.budget_us(4 * b.RX_WINDOW_MS * 1000),
            "hooks": hooks,
            "line_bytes": line_bytes(op) if lines else 0,
            "outputs": {"line": f"{b.base(index, op)['id']}_line"},
        }
    )
    b.emit("ops/uart_rx_irq", ctx)


def _instance(plan: Plan, target: Target, framework: str, index: int, op: UartRxIrq) -> list[Evidence]:
    """A named UART must exist and have its pins declared (it receives: its TX and RX pins);
    the shared rule is the peripherals concern's."""
    from rac_fw.domains.firmware.obligations.peripherals import uart_named  # runs after the plan model exists

    return uart_named(plan, target, index, op, needs_rx=True)

def line_bytes(op: UartRxIrq) -> int:
    """The longest line kept (a longer one is cut): the ring's size, at most 128 bytes."""
    return min(op.ring_bytes, 128)


#: What a behaviour may use: the ``line`` event (a whole line arrived) and the line itself.
OUTPUTS = {"line": Output("bytes", "The last whole line received, without its line end (cut to 128 bytes).",
                          size=line_bytes, ready="event")}  # fmt: skip


SPEC = OpSpec(
    model=UartRxIrq,
    family="uart",
    flags=frozenset({Flag.ISR_CONTEXT, Flag.RX_RING, Flag.CONSOLE}),
    realizations={
        "zephyr": Realization(
            template="uart", view=_zephyr, available=console_uart_known, admits=zephyr_uart_mode("interrupt")
        ),
        "espidf": Realization(template="uart", view=_espidf),
        "hal": Realization(template="ops", view=_hal),
        "baremetal": Realization(template="ops/uart_rx_irq", view=_baremetal,
                                 behaviour=frozenset({"event:line", "output:line"})),
    },
    events=("line",),
    outputs=OUTPUTS,
    checks=(_instance, baud_error),
    codes=("E_NO_PERIPHERAL", "E_UNKNOWN_RESOURCE", "E_BAUD_ERROR"),
)
