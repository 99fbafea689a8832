"""Devicetree and placement answers for the Zephyr lowering, all derived from the target facts.

Which node a LED, button, UART, bus, ADC channel, PWM output or watchdog is; which overlay lines
enable it; where a DMA buffer lives and whether it needs cache maintenance (asked of
``placement``, the one place that decides). Board names and labels come from the facts;
nothing here tests a target id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rac_fw.contract import Relaxation
from rac_fw.domains.firmware.bind import UnboundName
from rac_fw.domains.firmware.facts.model import Pin, Target
from rac_fw.domains.firmware.facts.query import console_rx_dma, pwm_led_on
from rac_fw.domains.firmware.lower.zephyr.core import BuilderCore
from rac_fw.domains.firmware.lower.zephyr.model import C_PREFIX, alias_macro, dt_property, unsupported


@dataclass(frozen=True)
class RxDmaRoute:
    """How the console UART's receive requests reach memory by DMA under Zephyr's async UART API."""

    request: str
    """DMA request name in the facts' spelling (``USART3_RX``, ``UARTE0_RX``)."""
    controller: str
    """The DMA controller that moves the bytes (``DMA1``; ``EasyDMA`` for a UART with its own DMA)."""
    dmas: str | None
    """The UART node's devicetree ``dmas`` entry; None when the UART owns its DMA (nRF UARTE EasyDMA)."""
    nodes: tuple[str, ...] = ()
    """DMA controller / request-multiplexer node labels the overlay must enable."""


def console_rx_route(target: Target) -> RxDmaRoute | None:
    """The devicetree form of the console receiver's DMA path (``facts.query.console_rx_dma`` decides it).

    A UART that owns its DMA (nRF EasyDMA) needs no ``dmas``; a fixed request mapping gives the
    ``st,stm32-dma-v1`` cells (stream, channel, config, features); a request multiplexer the
    ``st,stm32-dmamux`` cells (mux channel, request line, config).
    """
    path = console_rx_dma(target)
    if path is None:
        return None
    label = path.controller.name.lower()
    if path.builtin:
        return RxDmaRoute(path.request, path.controller.name, None)
    if path.mux is not None:
        mux = path.mux.mux.lower()
        dmas = f"<&{mux} {path.channel} {path.mux.line} STM32_DMA_PERIPH_RX>"
        return RxDmaRoute(path.request, path.controller.name, dmas, (label, mux))
    cells = f"{path.stream} {path.channel} STM32_DMA_PERIPH_RX STM32_DMA_FIFO_FULL"
    return RxDmaRoute(path.request, path.controller.name, f"<&{label} {cells}>", (label,))


class DevicetreeFacts(BuilderCore):
    """Resolves plan names to devicetree nodes and records the overlay lines they need."""

    def gpio_ref(self, pin_name: str, active_low: bool) -> str:
        """``<&gpiod 12 GPIO_ACTIVE_HIGH>`` for a pin in the target's naming (PD12, P0.13)."""
        flag = "GPIO_ACTIVE_LOW" if active_low else "GPIO_ACTIVE_HIGH"
        stm = re.fullmatch(r"P([A-K])(\d+)", pin_name)
        if stm:
            return f"<&gpio{stm.group(1).lower()} {int(stm.group(2))} {flag}>"
        nrf = re.fullmatch(r"P(\d)\.(\d+)", pin_name)
        if nrf:
            return f"<&gpio{int(nrf.group(1))} {int(nrf.group(2))} {flag}>"
        host = re.fullmatch(r"GPIO(\d+)", pin_name)
        if host and "gpio0" in self.labels:
            return f"<&gpio0 {int(host.group(1))} {flag}>"
        raise unsupported("resources.pins", f"pin {pin_name} has no Zephyr GPIO controller", [pin_name], [])

    def gpio_spec(self, role: str, name: str, where: str, kind: str, op_id: str) -> str:
        """``GPIO_DT_SPEC_GET(...)`` for the board LED/button or declared pin the plan name is bound to."""
        self.app.includes.add("zephyr/drivers/gpio.h")  # declares struct gpio_dt_spec and GPIO_DT_SPEC_GET
        board = self.target.board
        try:
            endpoint = self.bound.endpoint("led" if kind == "led" else "button", name)
        except UnboundName:
            items = board.leds if kind == "led" else board.buttons
            choices = [i.dt_label or i.name for i in items]
            raise unsupported(
                where,
                f"{name!r} is neither a board {kind} ({', '.join(choices) or 'none'}) nor a declared pin",
                [name],
                [
                    Relaxation(
                        description=f"use board {kind} {c}",
                        patch=[{"op": "replace", "path": where.split("."), "value": c}],
                    )
                    for c in choices[:3]
                ],
            ) from None
        label = endpoint.dt_label
        if label and label in board.dt_aliases:
            return f"GPIO_DT_SPEC_GET(DT_ALIAS({alias_macro(label)}), gpios)"
        if label:
            return f"GPIO_DT_SPEC_GET(DT_NODELABEL({label}), gpios)"
        prop = dt_property(f"{op_id}-{role}-gpios")
        self.app.user_props[prop] = self.gpio_ref(endpoint.pin, endpoint.active_low)
        return f"GPIO_DT_SPEC_GET(DT_PATH(zephyr_user), {alias_macro(prop)})"

    def console_rx_route(self) -> RxDmaRoute | None:
        """The console receiver's DMA route on this board (see :func:`console_rx_route`)."""
        return console_rx_route(self.target)

    def console(self) -> tuple[str, int]:
        """Devicetree label of the console UART and its board baud rate."""
        label = self.target.board.dt_chosen.get("zephyr,console")
        console = self.target.board.console
        if label is None and console is not None:
            label = console.uart.lower()
        if label is None:
            raise unsupported("operations", "the board has no console UART", [self.target.id], [])
        return label, console.baud if console is not None else 115200

    def uart_node(self, index: int, op: Any) -> str:
        """The console UART (the only UART this lowering drives); sets its baud if the plan asks."""
        label, board_baud = self.console()
        if op.uart is not None and op.uart.lower() != label:
            raise unsupported(
                f"operations[{index}].uart",
                f"the Zephyr lowering drives the console UART ({label.upper()}); {op.uart} needs pin "
                "control it does not generate",
                [op.uart],
                [
                    Relaxation(
                        description="use the console UART",
                        patch=[{"op": "remove", "path": ["operations", index, "uart"]}],
                    )
                ],
            )
        if op.baud is not None and op.baud != board_baud:
            self.app.okay(label, f"current-speed = <{op.baud}>;")
        return label

    def claim_rx(self, index: int, node: str) -> None:
        """Make operation ``index`` the only receiver of UART ``node`` (IRQ and async APIs exclude each
        other per instance, and two readers would split the byte stream)."""
        owner = self.app.rx_owners.setdefault(node, index)
        if owner != index:
            raise unsupported(
                f"operations[{index}]",
                f"operations[{owner}] already owns the receiver of {node}",
                [node],
                [
                    Relaxation(
                        description=f"remove operations[{index}]",
                        patch=[{"op": "remove", "path": ["operations", index]}],
                    )
                ],
            )

    def node_label(self, peripheral: str) -> str | None:
        """Devicetree node label of a peripheral instance (``I2C1`` → ``i2c1``, ``TWIM0`` → ``i2c0``)."""
        lower = peripheral.lower()
        candidates = [lower, re.sub(r"^(twim|twis|twi)", "i2c", lower), re.sub(r"^(spim|spis)", "spi", lower)]
        return next((c for c in candidates if c in self.labels), None)

    def bus_device(self, index: int, op: Any, bus: str) -> tuple[Any, str]:
        device = self.plan.device(op.device)
        if device is None or device.bus != bus:
            raise unsupported(
                f"operations[{index}].device", f"{op.device!r} is not a declared {bus} device", [op.device], []
            )
        label = self.node_label(device.controller)
        if label is None:
            enabled = sorted(x for x in self.labels if re.fullmatch(rf"{bus}\d*", x))
            raise unsupported(
                f"resources.devices.{device.name}.controller",
                f"{device.controller} is not enabled by the {self.board} devicetree (it needs pin control "
                f"the Zephyr lowering does not generate); enabled: {', '.join(enabled) or 'none'}",
                [device.controller],
                [
                    Relaxation(
                        description=f"put {device.name} on {e.upper()}",
                        patch=[
                            {
                                "op": "replace",
                                "path": [
                                    "resources",
                                    "devices",
                                    self.plan.resources.devices.index(device),
                                    "controller",
                                ],
                                "value": e.upper(),
                            }
                        ],
                    )
                    for e in enabled[:3]
                ],
            )
        self.app.okay(label)
        self.app.includes.add("zephyr/sys/atomic.h")
        return device, label

    def _adc_pin(self, where: str, pin_name: str | None) -> tuple[Pin, str] | None:
        """The analog pin and the analog signal it carries (``ADC1_INP15``, ``AIN1``).

        None for an emulated ADC without pins (native_sim's ``zephyr,adc-emul``). Without a pin in the
        plan the board's default analog input (fact ``board.adc_default_pin``) is used, else the first
        analog pin the board does not wire to a LED, button or reserved function.
        """
        facts = self.target.adc
        if pin_name is None:
            default = self.target.board.adc_default_pin
            if default is not None:
                pin_name = default
            else:
                board = self.target.board
                taken = {x.pin for x in board.leds} | {x.pin for x in board.buttons} | set(board.reserved_pins)
                usable = sorted(
                    p.name for p in self.target.pins.values() if p.analog and not p.reserved and p.name not in taken
                )
                # Prefer a pin whose analog pin-control group the board devicetree already uses.
                usable.sort(
                    key=lambda name: (
                        not any(f"{s}_{name}".lower() in self.labels for s in self.target.pins[name].analog)
                    )
                )
                if not usable:
                    if facts is not None and facts.units:
                        return None
                    raise unsupported(where, "the target has no analog input pin", [self.target.id], [])
                pin_name = usable[0]
        pin = self.target.pins.get(pin_name)
        if pin is None or not pin.analog:
            raise unsupported(where, f"{pin_name} is not an analog input", [pin_name], [])
        signal = next((s for s in pin.analog if re.fullmatch(r"(ADC\d+_INP?\d+|ADC\d+_CH\d+|AIN\d+)", s)), None)
        if signal is None:
            raise unsupported(where, f"{pin_name} carries no single-ended ADC input", [pin_name], [])
        return pin, signal

    def adc_channel(
        self, index: int, where: str, channel: Any, resolution: int, settings: dict[str, str] | None = None
    ) -> int:
        """Register one ADC channel in zephyr,user io-channels; return its index in that list.

        ``settings``: channel-node properties (``zephyr,oversampling`` → ``<4>``) that replace the defaults
        below or are added after them (``adc_sample``'s acquisition time, reference, differential input)."""
        if hasattr(channel, "channel_index"):
            slot, pin_name = channel.channel_index, channel.pin
        else:
            slot, pin_name = None, channel.pin
        found = self._adc_pin(where, pin_name)
        facts = self.target.adc
        pin, signal = found if found is not None else (None, "")
        nrf = re.fullmatch(r"AIN(\d+)", signal)
        stm = re.fullmatch(r"ADC(\d+)_INP?(\d+)", signal)
        fixed = re.fullmatch(r"ADC(\d+)_CH(\d+)", signal)  # ESP32: each channel has one fixed pin
        units = (facts.units if facts is not None else ()) or ("adc",)
        unit_nodes = facts.zephyr_nodes if facts is not None else {}
        numbered = stm or fixed
        unit = f"ADC{numbered.group(1)}" if numbered is not None else None
        if unit is not None:
            node = str(unit_nodes.get(unit, unit.lower()))
        else:
            node = (facts.zephyr_node if facts is not None else None) or units[0].lower()
        if node not in self.labels:
            raise unsupported(where, f"ADC node {node!r} is not in the {self.board} devicetree", [node], [])
        if found is None:
            signal = f"channel{slot if slot is not None else len(self.app.io_channels)}"
        key = f"{node}:{signal}"
        existing = {v.split("|", 1)[0]: k for k, v in self.app.io_channels.items()}
        if key in existing and slot is None:
            return existing[key]
        if slot is None:
            slot = next(i for i in range(64) if i not in self.app.io_channels)
        elif slot in self.app.io_channels and self.app.io_channels[slot].split("|", 1)[0] != key:
            raise unsupported(
                where, f"io-channels[{slot}] is already {self.app.io_channels[slot].split('|')[0]}", [str(slot)], []
            )
        gain = "ADC_GAIN_1_6" if nrf else "ADC_GAIN_1"
        lines = [
            f'zephyr,gain = "{gain}";',
            'zephyr,reference = "ADC_REF_INTERNAL";',
            "zephyr,acquisition-time = <ADC_ACQ_TIME_DEFAULT>;",
        ]
        if nrf:
            # SAADC: the channel node is a slot; the analog input is routed by zephyr,input-positive.
            reg = slot
            lines.append(f"zephyr,input-positive = <NRF_SAADC_{signal}>; /* {pin.name if pin else ''} */")
        elif fixed:
            reg = int(fixed.group(2))
        elif stm:
            # STM32: the channel node's reg is the hardware channel; its pin needs analog pin control.
            reg = int(stm.group(2))
            self.app.okay(node, "#address-cells = <1>;", "#size-cells = <0>;")
            self._stm32_analog_pinctrl(node, f"{signal.lower()}_{pin.name.lower() if pin else ''}")
        else:
            reg = slot
        lines.append(f"zephyr,resolution = <{resolution}>;")
        for prop, value in (settings or {}).items():
            lines = [line for line in lines if not line.startswith(f"{prop} ")]
            lines.append(f"{prop} = {value};" if value else f"{prop};")
        self.app.okay(node, "#address-cells = <1>;", "#size-cells = <0>;")
        reference = facts.reference if facts is not None else None
        if reference is not None and reference.zephyr_property:
            # The controller's node states the internal reference voltage the channels above select.
            self.app.okay(node, f"{reference.zephyr_property} = <{reference.internal_mv}>;")
        child = f"channel@{reg:x} {{\n\treg = <{reg}>;\n" + "".join(f"\t{line}\n" for line in lines) + "};"
        block = self.app.label_blocks[node]
        if not any(line.startswith(f"channel@{reg:x} ") for line in block):
            block.append(child)
        self.app.io_channels[slot] = f"{key}|<&{node} {reg}>"
        return slot

    def _stm32_analog_pinctrl(self, node: str, group: str) -> None:
        block = self.app.label_blocks[node]
        current = next((i for i, line in enumerate(block) if line.startswith("pinctrl-0 = ")), None)
        if current is None:
            block.append(f"pinctrl-0 = <&{group}>;")
            block.append('pinctrl-names = "default";')
        elif f"&{group}" not in block[current]:
            block[current] = block[current].replace(">;", f" &{group}>;")

    def pwm_spec(self, index: int, output: str) -> str:
        """``PWM_DT_SPEC_GET`` of the ``pwm-leds`` node that drives the pin ``output`` is bound to."""
        board = self.target.board
        bound = self.bound.endpoints.get(("led", output))
        node = pwm_led_on(self.target, bound.pin) if bound is not None else None
        if node is not None:
            if node.alias and node.alias in board.dt_aliases:
                return f"PWM_DT_SPEC_GET(DT_ALIAS({alias_macro(node.alias)}))"
            return f"PWM_DT_SPEC_GET(DT_NODELABEL({node.node}))"
        choices = sorted(a for a in board.dt_aliases if a.startswith("pwm-led"))
        raise unsupported(
            f"operations[{index}].output",
            f"{output!r} has no pwm-leds node on {self.board}; PWM outputs: {', '.join(choices) or 'none'}",
            [output],
            [
                Relaxation(
                    description=f"drive {c[4:]}",
                    patch=[{"op": "replace", "path": ["operations", index, "output"], "value": c[4:]}],
                )
                for c in choices[:3]
            ],
        )

    def watchdog_node(self) -> str:
        aliases = self.target.board.dt_aliases
        if "watchdog0" in aliases:
            self.app.okay(aliases["watchdog0"])
            return "DT_ALIAS(watchdog0)"
        for label in ("iwdg", "iwdg1", "wdt0", "wdt"):
            if label in self.labels:
                self.app.okay(label)
                return f"DT_NODELABEL({label})"
        raise unsupported("operations", f"{self.board} has no watchdog node", [self.target.id], [])

    def dma_buffer(self, name: str, where: str, nocache: bool = False, pieces: int = 1) -> dict[str, Any]:
        """Declaration facts for a DMA buffer, all from ``placement.buffer_needs`` (the one
        place deciding region, alignment and cache maintenance): section, alignment, padding.

        ``nocache``: the caller cannot clean/invalidate around the transfer (a driver starts the DMA),
        so a D-cached buffer is declared ``__nocache`` instead — Zephyr's non-cacheable MPU region inside
        the default RAM. ``pieces``: the buffer is used as that many equal, line-aligned parts.
        """
        from rac_fw.domains.firmware.placement import buffer_needs, default_ram

        buffer = self.plan.buffer(name)
        needs = buffer_needs(self.plan, self.target, "zephyr", name)
        if buffer is None or needs is None:
            raise unsupported(where, f"{name!r} is not a declared buffer with a placement", [name], [])
        region = self.target.region(needs.region)
        align = max(needs.alignment_bytes, needs.line_bytes or 1)
        # Pad to whole cache lines so maintenance of this buffer never touches a neighbour's data.
        size = -(-buffer.size_bytes // (align * pieces)) * align * pieces
        # Ordinary data lands in the default RAM (zephyr,sram) without a section attribute.
        home = default_ram(self.target)
        default_label = home.dt_label if home is not None else None
        label = getattr(region, "dt_label", None) if region is not None else None
        section = None
        if label and label != default_label:
            self.app.includes.add("zephyr/linker/devicetree_regions.h")
            section = f"Z_GENERIC_SECTION(LINKER_DT_NODE_REGION_NAME(DT_NODELABEL({label})))"
        uncached = nocache and needs.cache_maintenance
        if uncached:
            if section is not None:
                index = self.plan.resources.buffers.index(buffer)
                raise unsupported(
                    f"resources.buffers[{index}].placement",
                    f"{name} is in D-cached {needs.region}; the driver starts this DMA itself, so the buffer "
                    f"must be __nocache, which Zephyr places in the default RAM ({default_label})",
                    [name, needs.region],
                    [
                        Relaxation(
                            description=f"let the tool place {name}",
                            patch=[{"op": "remove", "path": ["resources", "buffers", index, "placement"]}],
                        )
                    ]
                    if buffer.placement is not None
                    else [],
                )
            self.app.includes.add("zephyr/linker/section_tags.h")
            self.app.kconfig.setdefault("CONFIG_NOCACHE_MEMORY", "dma")
        elif needs.cache_maintenance:
            self.app.includes.add("zephyr/cache.h")
            self.app.kconfig.setdefault("CONFIG_CACHE_MANAGEMENT", "dma")
        return {
            "name": C_PREFIX + name,
            "plan_name": name,
            "size": size,
            "plan_size": buffer.size_bytes,
            "align": align,
            "section": "__nocache" if uncached else section,
            "region": needs.region,
            "maintain": needs.cache_maintenance and not uncached,
            "nocache": uncached,
        }

    def dma_controller(self, index: int, op: Any) -> str:
        """The controller ``placement.buffer_controller`` assigns (the one place that decides)."""
        from rac_fw.domains.firmware.placement import buffer_controller

        controller = buffer_controller(self.plan, self.target, op.src)
        label = controller.name.lower() if controller is not None else ""
        if controller is None or not controller.memory_to_memory or label not in self.labels:
            raise unsupported(
                f"operations[{index}].controller",
                f"no memory-to-memory DMA controller node in the {self.board} devicetree",
                [controller.name if controller else "DMA"],
                [],
            )
        self.app.okay(label)
        # STM32H7 DMA1/2 requests go through DMAMUX1, which must be enabled with them.
        if "dmamux1" in self.labels:
            self.app.okay("dmamux1")
        return label
