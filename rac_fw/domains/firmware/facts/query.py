"""Questions asked of the target facts, answered in one place.

Obligations, op specs (to say where they can be realized) and lowerings all ask these instead of
keeping private copies: which board LED a plan name means, which devicetree labels a board has,
which DMA controllers serve a request, how the console receiver reaches memory by DMA, which
watchdog the chip has. Every answer is a function of the facts; nothing here tests a target id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rac_fw.domains.firmware.facts.load import peripheral
from rac_fw.domains.firmware.facts.model import BoardButton, BoardLed, DmaController, Target

# --- board LEDs and buttons -------------------------------------------------------------------------


def normalized(name: str) -> str:
    """Board names and labels compared the way a plan may spell them: ``LD1_GREEN``/``pwm-led0``."""
    return name.lower().replace("-", "_")


@dataclass(frozen=True)
class Ambiguous:
    """A plan name that, spelled loosely, matches two different board items."""

    name: str
    candidates: tuple[BoardLed | BoardButton, ...]
    """The items it could mean, in rule order (alias, node label, vendor name)."""


def _alias_node(target: Target, name: str) -> str | None:
    return target.board.dt_aliases.get(name)


@dataclass(frozen=True)
class PwmLed:
    """A ``pwm-leds`` child of the board devicetree: the PWM channel that dims the LED on ``pin``."""

    node: str
    """Its node label (``pwm_led0``, ``red_pwm_led``)."""
    alias: str | None
    pin: str
    pwm: str
    channel: int


def pwm_leds(target: Target) -> list[PwmLed]:
    """The board's ``pwm-leds`` nodes (``extra.pwm_leds``), in the pack's order."""
    return [
        PwmLed(str(node), e.get("alias"), str(e["pin"]), str(e.get("pwm", "")), int(e.get("channel", 0)))
        for node, e in chip_table(target, "pwm_leds").items()
        if isinstance(e, dict) and "pin" in e
    ]


def pwm_led_on(target: Target, pin: str) -> PwmLed | None:
    """The ``pwm-leds`` node driving ``pin``, if the board has one."""
    return next((p for p in pwm_leds(target) if p.pin == pin), None)


def _pwm_led_item(target: Target, items: tuple[Any, ...], name: str) -> Any:
    """The board LED a ``pwm-leds`` node label or alias names (``pwm_led0`` → LED1 on the nRF52840-DK)."""
    key = normalized(name)
    for entry in pwm_leds(target):
        if key in {normalized(entry.node), normalized(entry.alias or "")}:
            return next((x for x in items if x.pin == entry.pin), None)
    return None


def _lookup(target: Target, items: tuple[Any, ...], name: str) -> Any:
    """The one rule for board LED and button names.

    Exact spellings first, in this order: a devicetree alias (``led1`` → the node it points at), a
    node label, the board's vendor name (``LED1``, ``B1_USER``). Last, for LEDs, the label or alias of the
    board's ``pwm-leds`` node that dims it (``pwm_led0``). Only when no exact spelling matches
    are names compared case- and dash-insensitively; if that loose comparison reaches two different
    items the answer is :class:`Ambiguous` (callers turn it into an error with both candidates).

    So on the nRF52840-DK ``led1`` is the devicetree alias led1 = LED2 (P0.14), ``LED1`` is LED1
    (P0.13), and ``Led1`` is ambiguous.
    """
    node = _alias_node(target, name)
    for found in (
        next((x for x in items if node is not None and x.dt_label == node), None),
        next((x for x in items if x.dt_label == name), None),
        next((x for x in items if x.name == name), None),
    ):
        if found is not None:
            return found
    key = normalized(name)
    loose_node = next((n for a, n in target.board.dt_aliases.items() if normalized(a) == key), None)
    matches: list[Any] = []
    for item in items:
        if (
            (loose_node is not None and item.dt_label == loose_node)
            or (item.dt_label and normalized(item.dt_label) == key)
            or normalized(item.name) == key
        ) and item not in matches:
            matches.append(item)
    if len(matches) > 1:
        return Ambiguous(name, tuple(matches))
    if matches:
        return matches[0]
    return _pwm_led_item(target, items, name) if items is target.board.leds else None


def board_led(target: Target, name: str) -> BoardLed | None:
    """The board LED a plan name means (None when unknown or ambiguous: see :func:`ambiguous_board_name`)."""
    found = _lookup(target, target.board.leds, name)
    return found if isinstance(found, BoardLed) else None


def board_button(target: Target, name: str) -> BoardButton | None:
    """The board button a plan name means (None when unknown or ambiguous)."""
    found = _lookup(target, target.board.buttons, name)
    return found if isinstance(found, BoardButton) else None


def ambiguous_board_name(target: Target, name: str, led: bool) -> Ambiguous | None:
    """Set when ``name`` matches two board items only when compared loosely (``Led1``)."""
    found = _lookup(target, target.board.leds if led else target.board.buttons, name)
    return found if isinstance(found, Ambiguous) else None


def exact_name(item: BoardLed | BoardButton) -> str:
    """How a plan names ``item``: its devicetree label, else its vendor name, spelled as a plan name may
    be (lowercase, ``_`` for ``-``: ``pwm-led0`` → ``pwm_led0``, which the lookup finds again)."""
    return normalized(item.dt_label or item.name)


# --- which pins a plan may take ----------------------------------------------------------------------


def board_wiring(target: Target, pin: str) -> str | None:
    """What the board wires ``pin`` to (LED, button, an on-board chip), or None if nothing."""
    if any(led.pin == pin for led in target.board.leds):
        return "a board LED"
    if any(button.pin == pin for button in target.board.buttons):
        return "a board button"
    return target.board.reserved_pins.get(pin)


def pin_free(target: Target, name: str) -> bool:
    """The one rule for a pin a plan may take for its own use: not reserved by the chip (SWD, crystal,
    flash), not a strapping pin, needing nothing switched first (NFC), and wired to nothing on the board.

    The observation's free-pin list and the pin relaxations the obligations offer both ask this, so a
    pin shown free is never then rejected (GPIO45 on the ESP32-S3 is a strapping pin: not free).
    """
    pin = target.pins.get(name)
    return (
        pin is not None
        and not pin.reserved
        and not pin.strapping
        and not pin.requires
        and board_wiring(target, name) is None
    )


# --- devicetree labels --------------------------------------------------------------------------------


def dt_labels(target: Target) -> set[str]:
    """Every node label the board devicetree defines (node labels plus alias and chosen targets)."""
    board = target.board
    return set(board.dt_node_labels) | set(board.dt_aliases.values()) | set(board.dt_chosen.values())


def has_dt_label(target: Target, *patterns: str) -> bool:
    """The board has a node label or alias matching one of the regular expressions ``patterns``."""
    known = dt_labels(target) | set(target.board.dt_aliases)
    return any(re.fullmatch(p, label) for p in patterns for label in known)


def console_uart_known(target: Target) -> bool:
    """The board has a console UART (from the board facts or the devicetree's chosen console)."""
    return target.board.console is not None or "zephyr,console" in target.board.dt_chosen


# --- DMA routing --------------------------------------------------------------------------------------


def request_instance(request: str) -> str:
    """``USART2_RX`` → ``USART2``: the peripheral instance behind a DMA request name."""
    for suffix in ("_RX", "_TX"):
        if request.endswith(suffix):
            return request[: -len(suffix)]
    return request


def muxed_requests(target: Target, controller: DmaController) -> set[str] | None:
    """The requests a request multiplexer (``extra.dmamux.<MUX>``) feeds ``controller``, or None when
    no multiplexer feeds it. STM32H7: DMAMUX1 feeds DMA1/DMA2, DMAMUX2 feeds BDMA, each with its own
    request lines (the SVD's ``DMAREQ_ID`` enumerations), so a D3 request such as ``LPUART1_RX``
    reaches BDMA only."""
    found: set[str] | None = None
    for mux in chip_table(target, "dmamux").values():
        if isinstance(mux, dict) and controller.name in (mux.get("controllers") or {}):
            found = (found or set()) | set(mux.get("requests") or {})
    return found


def _serves(target: Target, controller: DmaController, request: str) -> bool:
    """``controller`` can take ``request``: from its multiplexer's request lines when one feeds it,
    else from its ``peripherals`` list (empty: any)."""
    instance = request_instance(request)
    lines = muxed_requests(target, controller)
    if lines is not None:
        return request in lines or instance in {request_instance(line) for line in lines}
    return (
        not controller.peripherals
        or instance in controller.peripherals
        or ((instance.startswith("ADC") or instance == "SAADC") and any("ADC" in p for p in controller.peripherals))
    )


def serving_controllers(target: Target, request: str) -> list[DmaController]:
    """Controllers that can serve ``request``, best first (ADC mapping fact, explicit list, "any")."""
    instance = request_instance(request)
    mapped = chip_table(target, "adc").get("dma", {})
    names = mapped.get(instance, []) if isinstance(mapped, dict) else []
    ordered = [c for n in names for c in target.dma if c.name == n]
    ordered += [c for c in target.dma if instance in c.peripherals]
    ordered += [c for c in target.dma if not c.peripherals]
    ordered += [c for c in target.dma if any("ADC" in p for p in c.peripherals)]
    return [c for c in dict.fromkeys(ordered) if _serves(target, c, request)]


@dataclass(frozen=True)
class MuxLine:
    """A DMA request routed through a request multiplexer (STM32H7 DMAMUX)."""

    mux: str
    line: int
    """The multiplexer's request-line ID for the request (RM0433 Table 121/122)."""
    controllers: tuple[str, ...]
    """Controllers behind this multiplexer."""
    first_channels: dict[str, int]
    """Controller → the mux channel of its first stream."""


def dmamux_line(target: Target, request: str) -> MuxLine | None:
    """The multiplexer line of ``request`` from ``extra.dmamux``, or None when no mux routes it."""
    muxes = target.extra.get("dmamux")
    for mux, table in muxes.items() if isinstance(muxes, dict) else ():
        lines = table.get("requests") if isinstance(table, dict) else None
        if isinstance(lines, dict) and isinstance(lines.get(request), int):
            firsts = table.get("controllers") or {}
            controllers = tuple(str(c) for c in firsts)
            pairs = firsts.items() if isinstance(firsts, dict) else ()
            channels = {str(k): int(v) for k, v in pairs if isinstance(v, int)}
            return MuxLine(str(mux), int(lines[request]), controllers, channels)
    return None


def request_routable(target: Target, request: str) -> bool:
    """The facts route ``request``: a fixed (stream, channel) mapping or a multiplexer line."""
    return any(c.routes(request) for c in target.dma) or dmamux_line(target, request) is not None


def adc_dma_routable(target: Target) -> bool:
    """Some ADC unit of the chip has a DMA request route in the facts."""
    return any(request_routable(target, str(unit)) for unit in chip_table(target, "adc").get("units", ()))


@dataclass(frozen=True)
class RxDmaPath:
    """How the console UART's receiver reaches memory by DMA, decided from the facts."""

    request: str
    """DMA request name in the facts' spelling (``USART3_RX``, ``UARTE0_RX``)."""
    controller: DmaController
    stream: int | None = None
    """Fixed-mapping stream (STM32F4 RM0090 Tables 42/43); None for the other kinds."""
    channel: int | None = None
    """Fixed-mapping channel, or the multiplexer channel when ``mux`` is set."""
    mux: MuxLine | None = None

    @property
    def builtin(self) -> bool:
        """The UART owns its DMA (nRF EasyDMA: a controller without allocatable channels)."""
        return self.controller.channels == 0


def console_rx_dma(target: Target) -> RxDmaPath | None:
    """The DMA path of the console receiver, in the order the facts allow (None: no known path).

    A controller without allocatable channels is built into the peripheral; a fixed request mapping
    (``DmaController.routes``) gives stream and channel; a request multiplexer (``extra.dmamux``) gives
    the line, using the controller's last stream so the low ones stay free. The controller (and mux)
    must be nodes of the board devicetree when the board has one. Without such a fact: None, not a guess.
    """
    console = target.board.console
    if console is None:
        return None
    request = f"{console.uart}_RX"
    known = dt_labels(target)
    controllers = serving_controllers(target, request)
    for controller in controllers:
        if controller.channels == 0:
            return RxDmaPath(request, controller)
        fixed = controller.routes(request)
        if fixed and controller.name.lower() in known:
            return RxDmaPath(request, controller, stream=fixed[0][0], channel=fixed[0][1])
    mux = dmamux_line(target, request)
    if mux is not None:
        for controller in controllers:
            first = mux.first_channels.get(controller.name)
            if first is not None and {controller.name.lower(), mux.mux.lower()} <= known:
                return RxDmaPath(request, controller, channel=first + max(controller.channels, 1) - 1, mux=mux)
    return None


def memory_to_memory_controllers(target: Target) -> list[DmaController]:
    """DMA controllers that can copy memory to memory."""
    return [d for d in target.dma if d.memory_to_memory]


# --- peripherals --------------------------------------------------------------------------------------


def chip_table(target: Target, key: str) -> dict[str, Any]:
    """A mapping from the pack's chip tables (uart, timers, watchdog, adc…), empty when absent."""
    value = target.extra.get(key)
    return value if isinstance(value, dict) else {}


def has_registers(target: Target, instance: str, *registers: str) -> bool:
    """``instance`` is in the SVD facts and has every named register (flattened names, as in device.h)."""
    if instance not in target.peripherals:
        return False
    flat = (r.name.replace("[", "").replace("]", "") for r in peripheral(target.id, instance).registers)
    names = {re.sub(r"\W", "_", name) for name in flat}
    return all(r in names for r in registers)


def watchdog_instance(target: Target) -> tuple[str, dict[str, Any]] | None:
    """The independent watchdog the facts describe with a timeout model (IWDG*, WDT), and its facts."""
    for key, facts in chip_table(target, "watchdog").items():
        if not isinstance(facts, dict) or not (key.startswith("IWDG") or key == "WDT"):
            continue
        instance = key if key in target.peripherals else re.sub(r"\d+$", "", key)
        if instance in target.peripherals:
            return instance, facts
    return None
