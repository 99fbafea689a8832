"""The Plan: target, named resources, memory budget and a list of typed operations.

``operations`` is a discriminated union on ``op``; each operation model lives in ``plan/ops/<family>.py``
with a docstring stating its meaning. ``Plan.model_json_schema()`` is what ``rac-fw schema firmware``
publishes to agents.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Literal, get_args

from pydantic import Field, StringConstraints

from rac_fw.domains.firmware.plan.base import Operation, PlanModel
from rac_fw.domains.firmware.plan.ops.adc import AdcPeriodic, AdcRead, AdcScan
from rac_fw.domains.firmware.plan.ops.bus import I2cTransfer, SpiTransfer
from rac_fw.domains.firmware.plan.ops.dma import DmaMem2Mem, DmaPeriphRx
from rac_fw.domains.firmware.plan.ops.flash import FlashStore
from rac_fw.domains.firmware.plan.ops.gpio import GpioBlink, GpioInputIrq, GpioRead
from rac_fw.domains.firmware.plan.ops.handoff import IsrHandoff
from rac_fw.domains.firmware.plan.ops.log import Log
from rac_fw.domains.firmware.plan.ops.pwm import PwmFade, PwmFixed
from rac_fw.domains.firmware.plan.ops.sensor import SensorRead
from rac_fw.domains.firmware.plan.ops.threads import LockOrder, ProducerConsumer, SharedStateMutex
from rac_fw.domains.firmware.plan.ops.timer import TimerOneshot, TimerPeriodic
from rac_fw.domains.firmware.plan.ops.uart import UartLineRead, UartPrint, UartRxIrq
from rac_fw.domains.firmware.plan.ops.watchdog import Watchdog
from rac_fw.domains.firmware.plan.resources import Buffer, Device, PinUse, Resources, Thread

#: Every operation model, in catalog order.
OPERATION_MODELS: tuple[type[Operation], ...] = (
    GpioBlink, GpioInputIrq, GpioRead,
    UartPrint, UartRxIrq, UartLineRead,
    I2cTransfer, SpiTransfer,
    AdcRead, AdcPeriodic, AdcScan,
    PwmFixed, PwmFade,
    TimerPeriodic, TimerOneshot,
    Watchdog,
    DmaMem2Mem, DmaPeriphRx,
    IsrHandoff,
    ProducerConsumer, SharedStateMutex, LockOrder,
    SensorRead,
    Log,
    FlashStore,
)  # fmt: skip


def op_kind(model: type[Operation]) -> str:
    """The literal ``op`` value of an operation model (``GpioBlink`` → ``gpio_blink``)."""
    return str(get_args(model.model_fields["op"].annotation)[0])


#: Every operation kind (the ``op`` values), in catalog order.
OPERATION_KINDS: tuple[str, ...] = tuple(op_kind(m) for m in OPERATION_MODELS)

AnyOperation = Annotated[
    GpioBlink | GpioInputIrq | GpioRead
    | UartPrint | UartRxIrq | UartLineRead
    | I2cTransfer | SpiTransfer
    | AdcRead | AdcPeriodic | AdcScan
    | PwmFixed | PwmFade
    | TimerPeriodic | TimerOneshot
    | Watchdog
    | DmaMem2Mem | DmaPeriphRx
    | IsrHandoff
    | ProducerConsumer | SharedStateMutex | LockOrder
    | SensorRead
    | Log
    | FlashStore,
    Field(discriminator="op"),
]  # fmt: skip

#: Operations whose callback runs in interrupt context (an ``isr_handoff`` may name them as source).
ISR_OPERATIONS = frozenset(
    {"gpio_input_irq", "uart_rx_irq", "timer_periodic", "timer_oneshot", "dma_mem2mem", "dma_periph_rx"}
)
#: Operations that produce a value a ``log`` may print.
VALUE_OPERATIONS = frozenset(
    {"adc_read", "adc_periodic", "adc_scan", "gpio_read", "sensor_read", "i2c_transfer", "spi_transfer"}
)

TargetId = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
Framework = Literal["zephyr", "espidf", "hal", "baremetal"]


class Plan(PlanModel):
    """A firmware plan: what to run on which target, over which named resources.

    Lowering derives every API call, Kconfig symbol, devicetree node, register value, DMA placement and
    cache operation from these fields plus the target facts; the plan itself never holds any of them.
    """

    target: TargetId | None = Field(
        default=None,
        description="Target id (rac-fw targets list). When submitted as an action the action's task is "
        "the target; this field must then be absent or equal to it.",
    )
    board: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,47}$")] | None = Field(
        default=None, description="Board name, for reference; the target pack fixes the board."
    )
    framework: Framework | None = Field(
        default=None, description="Lowering framework; None = the target's default (first in its facts)."
    )
    resources: Resources = Field(default_factory=Resources)
    heap_bytes: int = Field(default=0, ge=0, le=1 << 22, description="System heap size in bytes.")
    stack_bytes: int = Field(default=2048, ge=256, le=1 << 18, description="Main thread stack in bytes.")
    wifi: bool = Field(default=False, description="The application runs the Wi-Fi radio.")
    operations: list[AnyOperation] = Field(min_length=1, max_length=64)

    # --- look-ups used by obligations and lowerings ----------------------------------------------
    def buffer(self, name: str) -> Buffer | None:
        return next((b for b in self.resources.buffers if b.name == name), None)

    def pin_use(self, name: str) -> PinUse | None:
        return next((p for p in self.resources.pins if p.name == name), None)

    def device(self, name: str) -> Device | None:
        return next((d for d in self.resources.devices if d.name == name), None)

    def thread(self, name: str) -> Thread | None:
        return next((t for t in self.resources.threads if t.name == name), None)

    def operation(self, name: str) -> Operation | None:
        return next((o for o in self.operations if o.name == name), None)

    def indexed(self, *ops: str) -> Iterator[tuple[int, Operation]]:
        """``(index, operation)`` for operations whose ``op`` is one of ``ops`` (all when empty)."""
        for index, operation in enumerate(self.operations):
            if not ops or operation.op in ops:
                yield index, operation

    def handoffs_from(self, source: str) -> list[IsrHandoff]:
        """The ``isr_handoff`` operations whose source is the operation named ``source``."""
        return [o for o in self.operations if isinstance(o, IsrHandoff) and o.source == source]
