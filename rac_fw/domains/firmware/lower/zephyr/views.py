"""One *view* per operation: the plain values its Jinja macro renders (``templates/zephyr/<family>.c.j2``).

A view holds node expressions, nanoseconds, counts and escaped literals; Python decides *what*, the
templates decide *how the C reads*. Plan strings enter a view only through ``c_string_literal``.
"""

from __future__ import annotations

from typing import Any

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.lower import LoweringError
from rac_fw.domains.firmware.lower.zephyr.devicetree import DevicetreeFacts, console_rx_route
from rac_fw.domains.firmware.lower.zephyr.model import (
    C_PREFIX,
    LOCK_PERIOD_MS,
    LOCK_TIMEOUT_MS,
    RING_POLL_MS,
    SENSOR_DRIVER_KCONFIG,
    SENSOR_SYNONYMS,
    UART_ASYNC_KCONFIG,
    UART_DRAIN_MS,
    UART_IRQ_KCONFIG,
    UART_RX_IDLE_CHARS,
    alias_macro,
    dt_property,
    unsupported,
)
from rac_fw.domains.firmware.ops.sensor.sensor_read import SENSOR_LABELS
from rac_fw.domains.firmware.plan.cstring import c_string_literal


class OperationViews(DevicetreeFacts):
    """``view_<op>(index, op) -> dict`` for every operation the Zephyr lowering realizes."""

    def view_gpio_blink(self, index: int, op: Any) -> dict[str, Any]:
        oid = self.ids[index]
        half = max(1, op.period_ms // 2)
        count = op.count * 2 if op.count is not None else None
        return {
            "id": oid,
            "spec": self.gpio_spec("led", op.led, f"operations.{index}.led", "led", oid),
            "setup": True,
            "step": {"period_ms": half, "count": count},
        }

    def view_gpio_input_irq(self, index: int, op: Any) -> dict[str, Any]:
        oid = self.ids[index]
        self.app.includes.add("zephyr/sys/atomic.h")
        pull = {"up": "GPIO_PULL_UP", "down": "GPIO_PULL_DOWN"}.get(op.pull or "", "")
        edge = {"rising": "GPIO_INT_EDGE_RISING", "falling": "GPIO_INT_EDGE_FALLING", "both": "GPIO_INT_EDGE_BOTH"}
        return {
            "id": oid,
            "spec": self.gpio_spec("button", op.button, f"operations.{index}.button", "button", oid),
            "flags": "GPIO_INPUT" + (f" | {pull}" if pull else ""),
            "edge": edge[op.edge],
            "debounce_ms": op.debounce_ms,
            "handoffs": self.handoffs(index),
            "setup": True,
        }

    def view_gpio_read(self, index: int, op: Any) -> dict[str, Any]:
        oid = self.ids[index]
        self.app.includes.add("zephyr/sys/atomic.h")
        return {
            "id": oid,
            "spec": self.gpio_spec("button", op.button, f"operations.{index}.button", "button", oid),
            "setup": True,
            "step": {"period_ms": op.interval_ms},
        }

    # uart ---------------------------------------------------------------------------------------

    def view_uart_print(self, index: int, op: Any) -> dict[str, Any]:
        return {
            "node": self.uart_node(index, op),
            "message": c_string_literal(op.message),
            "setup": True,
            "step": {"period_ms": op.repeat_interval_ms},
        }

    def _uart_rx(self, index: int, op: Any) -> dict[str, Any]:
        node = self.uart_node(index, op)
        self.claim_rx(index, node)
        self.app.includes.update({"zephyr/drivers/uart.h", "zephyr/sys/ring_buffer.h", "zephyr/sys/atomic.h"})
        for symbol in UART_IRQ_KCONFIG:
            self.app.kconfig.setdefault(symbol, "uart")
        return {"node": node}

    def view_uart_rx_irq(self, index: int, op: Any) -> dict[str, Any]:
        view = self._uart_rx(index, op)
        handoffs = self.handoffs(index)
        view.update(
            ring_bytes=op.ring_bytes,
            echo=op.echo,
            handoffs=handoffs,
            setup=True,
            # Without a handoff thread the main loop drains (and echoes) the ring.
            step=None if handoffs else {"period_ms": UART_DRAIN_MS},
        )
        return view

    def view_uart_line_read(self, index: int, op: Any) -> dict[str, Any]:
        view = self._uart_rx(index, op)
        view.update(
            ring_bytes=max(16, 1 << (op.max_line + 1).bit_length()),
            max_line=op.max_line,
            timeout_ms=op.timeout_ms,
            setup=True,
            step={"period_ms": UART_DRAIN_MS},
        )
        return view

    def view_dma_periph_rx(self, index: int, op: Any) -> dict[str, Any]:
        """Console UART reception by DMA through Zephyr's asynchronous UART API.

        The driver owns the DMA channel: it starts the transfer, reports received spans (UART_RX_RDY)
        and asks for the next buffer (UART_RX_BUF_REQUEST). The plan buffer is split into two halves
        handed out in turn (``circular``) or given once. Because the application never sees the DMA
        start, it cannot clean the cache before it; on a D-cached core the buffer is therefore
        ``__nocache`` (Zephyr 4.1's STM32 UART driver also rejects cacheable buffers with -EFAULT).
        """
        from rac_fw.domains.firmware.obligations.placement import request_instance

        where = f"operations[{index}]"
        label, baud = self.console()
        console = self.target.board.console
        console_rx = f"{console.uart}_RX" if console is not None else ""
        to_console = [
            Relaxation(
                description=f"receive the console UART {console_rx}",
                patch=[{"op": "replace", "path": ["operations", index, "peripheral"], "value": console_rx}],
            )
        ]
        if op.peripheral != console_rx:
            instance = request_instance(op.peripheral)
            if not op.peripheral.endswith("_RX") or "ADC" in instance:
                why = (
                    "a Zephyr ADC driver owns any DMA it uses for a read sequence, so the application "
                    "cannot start an ADC transfer into a plan buffer; sample with adc_scan"
                    if "ADC" in instance
                    else "the Zephyr lowering receives by DMA from the console UART's RX request only"
                )
                relax = [
                    Relaxation(
                        description=f"remove operations[{index}]",
                        patch=[{"op": "remove", "path": ["operations", index]}],
                    )
                ]
                raise unsupported(f"{where}.peripheral", f"{op.peripheral}: {why}", [op.peripheral], relax)
            raise unsupported(
                f"{where}.peripheral",
                f"the Zephyr lowering drives the console UART ({console_rx}); {op.peripheral} needs pin "
                "control it does not generate",
                [op.peripheral],
                to_console if console_rx else [],
            )
        route = console_rx_route(self.target)
        if route is None:
            raise unsupported(
                where,
                f"no DMA route for {console_rx} is known from the {self.target.id} facts "
                "(a DmaController.requests mapping or extra.dmamux request lines)",
                [console_rx],
                [],
            )
        if op.controller is not None and op.controller.upper() != route.controller.upper():
            raise unsupported(
                f"{where}.controller",
                f"{console_rx} is routed to {route.controller} in this lowering, not {op.controller}",
                [op.controller, route.controller],
                [
                    Relaxation(
                        description=f"use {route.controller}",
                        patch=[{"op": "remove", "path": ["operations", index, "controller"]}],
                    )
                ],
            )
        self.claim_rx(index, label)
        if route.dmas is not None:
            self.app.okay(label, f"dmas = {route.dmas};", 'dma-names = "rx";')
            for node in route.nodes:
                self.app.okay(node)
            self.app.kconfig.setdefault("CONFIG_DMA", "uart")
        pieces = 2 if op.circular else 1
        buffer = self.dma_buffer(op.buffer, f"{where}.buffer", nocache=True, pieces=pieces)
        self.app.includes.update({"zephyr/drivers/uart.h", "zephyr/sys/ring_buffer.h", "zephyr/sys/atomic.h"})
        for symbol in UART_ASYNC_KCONFIG:
            self.app.kconfig.setdefault(symbol, "uart")
        handoffs = self.handoffs(index)
        return {
            "node": label,
            "request": route.request,
            "controller": route.controller,
            "buffer": buffer,
            "circular": op.circular,
            "piece": buffer["size"] // pieces,
            # Report a span after this many microseconds of line silence (async API timeouts are in us).
            "timeout_us": -(-UART_RX_IDLE_CHARS * 10 * 1_000_000 // baud),
            "ring_bytes": buffer["size"],
            "handoffs": handoffs,
            "setup": True,
            "step": {"period_ms": UART_DRAIN_MS},
        }

    # i2c / spi ----------------------------------------------------------------------------------

    def view_i2c_transfer(self, index: int, op: Any) -> dict[str, Any]:
        device, label = self._bus_device(index, op, "i2c")
        self.app.includes.add("zephyr/drivers/i2c.h")
        return {
            "bus": label,
            "address": f"0x{device.address:02x}",
            "register": f"0x{op.register_index:02x}",
            "write_bytes": op.write_bytes,
            "read_bytes": op.read_bytes,
            "attempts": op.retries + 1,
            "timeout_ms": op.timeout_ms,
            "setup": True,
            "step": {"period_ms": op.interval_ms},
        }

    def view_spi_transfer(self, index: int, op: Any) -> dict[str, Any]:
        oid = self.ids[index]
        device, label = self._bus_device(index, op, "spi")
        self.app.includes.update({"zephyr/drivers/spi.h", "zephyr/drivers/gpio.h"})
        prop = dt_property(f"{oid}-cs-gpios")
        self.app.user_props[prop] = self.gpio_ref(device.chip_select, active_low=True)
        mode = []
        if op.mode & 2:
            mode.append("SPI_MODE_CPOL")
        if op.mode & 1:
            mode.append("SPI_MODE_CPHA")
        header = 1 if op.register_index is not None else 0
        return {
            "bus": label,
            "cs_prop": alias_macro(prop),
            "frequency": device.frequency_hz,
            "operation": " | ".join(["SPI_OP_MODE_MASTER", "SPI_TRANSFER_MSB", "SPI_WORD_SET(8)", *mode]),
            "register": f"0x{op.register_index:02x}" if op.register_index is not None else None,
            "length": header + max(op.write_bytes, op.read_bytes),
            "header": header,
            "read_bytes": op.read_bytes,
            "attempts": op.retries + 1,
            "setup": True,
            "step": {"period_ms": op.interval_ms},
        }

    # adc ----------------------------------------------------------------------------------------

    def _adc_view(
        self, index: int, op: Any, channels: list[Any], interval: int | None, count: int | None
    ) -> dict[str, Any]:
        self.app.includes.update({"zephyr/drivers/adc.h", "zephyr/sys/atomic.h"})
        slots = [self._adc_channel(index, f"operations[{index}].channel", ch, op.resolution_bits) for ch in channels]
        view: dict[str, Any] = {
            "slots": slots,
            "convert_mv": op.convert_mv,
            "setup": True,
            "step": {"period_ms": interval, "count": count},
            "buffer": None,
        }
        buffer_name = getattr(op, "buffer", None)
        if buffer_name is not None:
            view["buffer"] = self.dma_buffer(buffer_name, f"operations[{index}].buffer")
        return view

    def view_adc_read(self, index: int, op: Any) -> dict[str, Any]:
        return self._adc_view(index, op, [op.channel], None, None)

    def view_adc_periodic(self, index: int, op: Any) -> dict[str, Any]:
        return self._adc_view(index, op, [op.channel], op.interval_ms, op.samples)

    def view_adc_scan(self, index: int, op: Any) -> dict[str, Any]:
        return self._adc_view(index, op, list(op.channels), op.interval_ms, None)

    # pwm ----------------------------------------------------------------------------------------

    def view_pwm_fixed(self, index: int, op: Any) -> dict[str, Any]:
        self.app.includes.add("zephyr/drivers/pwm.h")
        period_ns = op.period_us * 1000
        return {
            "spec": self.pwm_spec(index, op.output),
            "period_ns": period_ns,
            "pulse_ns": round(period_ns * op.duty_percent / 100),
            "setup": True,
            "step": {"period_ms": None},
        }

    def view_pwm_fade(self, index: int, op: Any) -> dict[str, Any]:
        self.app.includes.add("zephyr/drivers/pwm.h")
        period_ns = op.period_us * 1000
        return {
            "spec": self.pwm_spec(index, op.output),
            "period_ns": period_ns,
            "step_ns": max(1, round(period_ns * op.step_percent / 100)),
            "ramp_down": op.ramp_down,
            "setup": True,
            "step": {"period_ms": op.interval_ms},
        }

    # timer --------------------------------------------------------------------------------------

    def _timer(self, index: int, op: Any, periodic: bool) -> dict[str, Any]:
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

    def view_timer_periodic(self, index: int, op: Any) -> dict[str, Any]:
        return self._timer(index, op, periodic=True)

    def view_timer_oneshot(self, index: int, op: Any) -> dict[str, Any]:
        return self._timer(index, op, periodic=False)

    # watchdog -----------------------------------------------------------------------------------

    def view_watchdog(self, index: int, op: Any) -> dict[str, Any]:
        self.app.includes.add("zephyr/drivers/watchdog.h")
        view: dict[str, Any] = {
            "id": self.ids[index],
            "node": self.watchdog_node(),
            "timeout_ms": op.timeout_ms,
            "interval_ms": op.feed_interval_ms,
            "flag": "WDT_FLAG_RESET_SOC" if op.reset_behaviour == "reset_soc" else "WDT_FLAG_RESET_CPU_CORE",
        }
        if op.feed_thread is None:
            view.update(setup=True, step={"period_ms": op.feed_interval_ms})
        else:
            view["thread_parts"] = [(op.feed_thread, self.thread_part("watchdog", "watchdog", view, feeds=True))]
        return view

    # dma ----------------------------------------------------------------------------------------

    def view_dma_mem2mem(self, index: int, op: Any) -> dict[str, Any]:
        self.app.includes.update({"zephyr/drivers/dma.h", "string.h", "zephyr/sys/atomic.h"})
        src = self.dma_buffer(op.src, f"operations[{index}].src")
        dst = self.dma_buffer(op.dst, f"operations[{index}].dst")
        return {
            "controller": self.dma_controller(index, op),
            "src": src,
            "dst": dst,
            "length": min(src["plan_size"], dst["plan_size"]),
            "verify": op.verify,
            "timeout_ms": 100 + src["plan_size"] // 1000,
            "handoffs": self.handoffs(index),
            "setup": True,
            "step": {"period_ms": None},
        }

    # isr handoff --------------------------------------------------------------------------------

    def view_isr_handoff(self, index: int, op: Any) -> dict[str, Any]:
        self.app.includes.update({"zephyr/sys/atomic.h", "string.h"})
        kind = self.source_kind(op.source)
        source_id = self.op_id(op.source) or op.source
        view: dict[str, Any] = {
            "id": self.ids[index],
            "mechanism": op.mechanism,
            "depth": op.depth,
            "item_bytes": op.item_bytes,
            "align": 4 if op.item_bytes % 4 == 0 else 1,
            "source": source_id,
            "source_kind": kind,
            "source_message": c_string_literal(f"{op.source}: event ") + ' "%u\\n"',
            "poll_ms": RING_POLL_MS,
        }
        source_op = self.plan.operation(op.source)
        view["echo"] = bool(getattr(source_op, "echo", False))
        view["thread_parts"] = [(op.thread, self.thread_part("handoff", "isr_handoff", view))]
        return view

    # threading ----------------------------------------------------------------------------------

    def view_producer_consumer(self, index: int, op: Any) -> dict[str, Any]:
        self.app.includes.update({"zephyr/sys/atomic.h", "string.h"})
        view: dict[str, Any] = {
            "id": self.ids[index],
            "depth": op.queue_depth,
            "item_bytes": op.item_bytes,
            "align": 4 if op.item_bytes % 4 == 0 else 1,
            "period_ms": op.period_ms,
        }
        view["thread_parts"] = [
            (op.producer, self.thread_part("threads", "producer", view)),
            (op.consumer, self.thread_part("threads", "consumer", view)),
        ]
        return view

    def view_shared_state_mutex(self, index: int, op: Any) -> dict[str, Any]:
        lock = C_PREFIX + op.lock
        self.app.locks.setdefault(lock, op.priority_inheritance)
        view: dict[str, Any] = {
            "id": self.ids[index],
            "lock": lock,
            "pi": self.app.locks[lock],
            "state_bytes": op.state_bytes,
            "period_ms": LOCK_PERIOD_MS,
            "timeout_ms": LOCK_TIMEOUT_MS,
            "message": c_string_literal(f"{op.name or self.ids[index]}: lock {op.lock} failed ") + ' "(%d)\\n"',
        }
        view["thread_parts"] = [(t, self.thread_part("threads", "shared_state_mutex", view)) for t in op.threads]
        return view

    def view_lock_order(self, index: int, op: Any) -> dict[str, Any]:
        locks = [C_PREFIX + lock for lock in op.locks]
        for lock in locks:
            self.app.locks.setdefault(lock, True)
        self.app.includes.add("zephyr/sys/atomic.h")
        view: dict[str, Any] = {
            "id": self.ids[index],
            "locks": [{"name": lock, "pi": self.app.locks[lock]} for lock in locks],
            "period_ms": LOCK_PERIOD_MS,
            "timeout_ms": LOCK_TIMEOUT_MS,
        }
        view["thread_parts"] = [(t, self.thread_part("threads", "lock_order", view)) for t in op.threads]
        return view

    # sensor / log -------------------------------------------------------------------------------

    def view_sensor_read(self, index: int, op: Any) -> dict[str, Any]:
        aliases = self.target.board.dt_aliases
        name = op.device
        dashed = name.replace("_", "-")
        # The plan's name as a node label or alias, else the label this SoC's devicetree gives that sensor.
        candidates = [aliases.get(dashed, name), aliases.get(f"{dashed}0", name), *SENSOR_SYNONYMS.get(name, ())]
        label = next((c for c in candidates if c in self.labels), name)
        if label not in self.labels:
            known = sorted(x for x in self.labels if x in SENSOR_LABELS)
            raise unsupported(
                f"operations[{index}].device",
                f"{name!r} is not a sensor node of {self.board} (the Zephyr lowering reads board sensor nodes "
                f"through their drivers); sensors: {', '.join(known) or 'none'}",
                [name],
                [
                    Relaxation(
                        description=f"read {k}",
                        patch=[{"op": "replace", "path": ["operations", index, "device"], "value": k}],
                    )
                    for k in known[:3]
                ],
            )
        self.app.okay(label)
        self.app.includes.update({"zephyr/drivers/sensor.h", "zephyr/sys/atomic.h"})
        for symbol in SENSOR_DRIVER_KCONFIG.get(label, ()):
            self.app.kconfig.setdefault(symbol, "sensor")
        if label in ("die_temp", "vref", "vbat") and self._adc_facts().get("internal_channels"):
            # These sensors are internal ADC channels on this chip: their driver samples through the ADC.
            self.app.kconfig.setdefault("CONFIG_ADC", "sensor")
        return {
            "node": label,
            "channel": f"SENSOR_CHAN_{op.channel.upper()}",
            "axes": 3 if op.channel.endswith("_xyz") else 1,
            "setup": True,
            "step": {"period_ms": op.interval_ms},
        }

    def view_log(self, index: int, op: Any) -> dict[str, Any]:
        if op.in_isr_of is not None:
            raise LoweringError(
                [
                    Evidence(
                        code="E_ISR_BLOCKING",
                        message="logging from interrupt context is not generated; log from a thread",
                        location=f"operations[{index}].in_isr_of",
                        objects=[op.in_isr_of],
                        relaxations=[
                            Relaxation(
                                description="log from the main loop",
                                patch=[{"op": "remove", "path": ["operations", index, "in_isr_of"]}],
                            )
                        ],
                    )
                ]
            )
        self.app.includes.add("zephyr/logging/log.h")
        values = []
        for name in op.values:
            oid = self.op_id(name)
            if oid is None:
                raise unsupported(f"operations[{index}].values", f"no operation named {name!r}", [name], [])
            self.app.includes.add("zephyr/sys/atomic.h")
            values.append({"label": c_string_literal(name), "id": oid})
        # The value formats are the tool's own text; the names travel as escaped %s arguments.
        fmt = '"' + " %s=%ld" * len(values) + '"' if values else ""
        return {
            "macro": {"dbg": "LOG_DBG", "inf": "LOG_INF", "wrn": "LOG_WRN", "err": "LOG_ERR"}[op.level],
            "message": c_string_literal(op.message),
            "format": fmt,
            "values": values,
            "step": {"period_ms": op.interval_ms},
        }
