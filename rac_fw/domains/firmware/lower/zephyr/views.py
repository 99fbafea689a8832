"""View helpers shared by the Zephyr realizations of one family (UART receive, ADC, timers).

Each operation's own view function lives in its op spec (``ops/<family>/<op>.py``, ``_zephyr``) and
receives the builder; what several operations of a family build alike lives here. A view holds node
expressions, nanoseconds, counts and escaped literals; Python decides *what*, the templates decide
*how the C reads*. Plan strings enter a view only through ``c_string_literal``.
"""

from __future__ import annotations

from typing import Any

from rac_fw.contract import Relaxation
from rac_fw.domains.firmware.lower.zephyr.devicetree import DevicetreeFacts
from rac_fw.domains.firmware.lower.zephyr.model import UART_IRQ_KCONFIG, unsupported


class OperationViews(DevicetreeFacts):
    """Family-level view helpers the op specs' Zephyr view functions call."""

    # uart ---------------------------------------------------------------------------------------

    def uart_rx(self, index: int, op: Any) -> dict[str, Any]:
        node = self.uart_node(index, op)
        self.claim_rx(index, node)
        self.app.includes.update({"zephyr/drivers/uart.h", "zephyr/sys/ring_buffer.h", "zephyr/sys/atomic.h"})
        for symbol in UART_IRQ_KCONFIG:
            self.app.kconfig.setdefault(symbol, "uart")
        return {"node": node}

    # adc ----------------------------------------------------------------------------------------

    def adc_view(
        self, index: int, op: Any, channels: list[Any], interval: int | None, count: int | None
    ) -> dict[str, Any]:
        self.app.includes.update({"zephyr/drivers/adc.h", "zephyr/sys/atomic.h"})
        slots = [self.adc_channel(index, f"operations[{index}].channel", ch, op.resolution_bits) for ch in channels]
        view: dict[str, Any] = {
            "slots": slots,
            "convert_mv": op.convert_mv,
            "setup": True,
            "step": {"period_ms": interval, "count": count},
            "buffer": None,
            # With a behaviour the console is the behaviour's: the conversions print no value lines.
            "quiet": self.plan.behaviour is not None,
            "outputs": {"mv": f"((int32_t)atomic_get(&{self.ids[index]}_mv))"},
        }
        buffer_name = getattr(op, "buffer", None)
        if buffer_name is not None:
            view["buffer"] = self.dma_buffer(buffer_name, f"operations[{index}].buffer")
        return view

    # timer --------------------------------------------------------------------------------------

    def timer_view(self, index: int, op: Any, periodic: bool) -> dict[str, Any]:
        if op.source != "kernel":
            raise unsupported(
                f"operations[{index}].source",
                f"the Zephyr lowering realizes timers with the kernel timer (k_timer), not {op.source}",
                [op.source],
                [
                    Relaxation(
                        description="use the kernel timer",
                        patch=[{"op": "replace", "path": ["operations", index, "source"], "value": "kernel"}],
                    )
                ],
            )
        self.app.includes.add("zephyr/sys/atomic.h")
        period = f"K_MSEC({op.period_ms})" if op.period_ms is not None else f"K_USEC({op.period_us})"
        return {"period": period, "periodic": periodic, "handoffs": self.handoffs(index), "setup": True}
