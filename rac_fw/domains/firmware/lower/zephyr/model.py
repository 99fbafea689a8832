"""What the Zephyr lowering collects before it renders: the app model, names and shared constants.

Written for the Zephyr release of ``facts/sdk.yaml`` the target names (``templates/zephyr/VERSION``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.sdk import default_version
from rac_fw.domains.firmware.lower import LoweringError

#: The default Zephyr release (``facts/sdk.yaml``): the templates' canonical spelling. Apps for another release
#: take its differences from ``facts.sdk.SdkRelease`` (the builder's ``sdk``).
ZEPHYR_VERSION = default_version("zephyr") or ""

#: Kconfig symbols each family needs (beyond what the board's defconfig already sets).
KCONFIG: dict[str, tuple[str, ...]] = {
    "gpio": ("CONFIG_GPIO",),
    "uart": ("CONFIG_SERIAL",),
    "i2c": ("CONFIG_I2C",),
    "spi": ("CONFIG_SPI", "CONFIG_GPIO"),
    "adc": ("CONFIG_ADC",),
    "pwm": ("CONFIG_PWM",),
    "watchdog": ("CONFIG_WATCHDOG",),
    "dma": ("CONFIG_DMA",),
    "sensor": ("CONFIG_SENSOR",),
    "log": ("CONFIG_LOG",),
}

#: Kconfig symbols the driver API a header declares needs (the board's defconfig may not set them: native_sim's
#: has neither serial nor GPIO): an operation including the header asks for them, whatever its family, as the
#: Zephyr samples' prj.conf files do (samples/basic/blinky: CONFIG_GPIO=y).
HEADER_KCONFIG: dict[str, tuple[str, ...]] = {
    "zephyr/drivers/gpio.h": ("CONFIG_GPIO",),
    "zephyr/drivers/uart.h": ("CONFIG_SERIAL",),
    "zephyr/drivers/i2c.h": ("CONFIG_I2C",),
    "zephyr/drivers/spi.h": ("CONFIG_SPI",),
    "zephyr/drivers/adc.h": ("CONFIG_ADC",),
    "zephyr/drivers/pwm.h": ("CONFIG_PWM",),
    "zephyr/drivers/watchdog.h": ("CONFIG_WATCHDOG",),
    "zephyr/drivers/dma.h": ("CONFIG_DMA",),
    "zephyr/drivers/sensor.h": ("CONFIG_SENSOR",),
    "zephyr/drivers/counter.h": ("CONFIG_COUNTER",),
    "zephyr/drivers/can.h": ("CONFIG_CAN",),
    "zephyr/drivers/hwinfo.h": ("CONFIG_HWINFO",),
}

#: Interrupt-driven UART receive needs the IRQ API and the ring buffer library.
UART_IRQ_KCONFIG = ("CONFIG_UART_INTERRUPT_DRIVEN", "CONFIG_RING_BUFFER")

#: Prefix of every C identifier derived from a plan name (operations, threads, locks, buffers).
C_PREFIX = "app_"


@dataclass
class Step:
    """A periodic (or one-shot) call of ``<id>_step()`` from main."""

    id: str
    tag: str
    period_ms: int
    count: int | None


@dataclass
class ThreadPart:
    """One operation's share of a plan thread: code before the loop and code inside it."""

    op_id: str
    prologue: str
    body: str
    feeds_watchdog: bool = False
    """A watchdog feeder must own its thread: any other part's waits would delay the feed."""


@dataclass
class AppModel:
    """Everything the operations contribute, collected before the files are rendered."""

    includes: set[str] = field(default_factory=lambda: {"zephyr/kernel.h", "zephyr/sys/printk.h"})
    kconfig: dict[str, str] = field(default_factory=dict)
    """Boolean Kconfig symbols set to ``y`` → the family that asked for them."""
    settings: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Kconfig symbols with a value (``CONFIG_BT_DEVICE_NAME`` → (family, ``"rac"``)), written verbatim."""
    files: dict[str, str] = field(default_factory=dict)
    """Whole files an operation or plan block contributes (``sysbuild.conf``, ``pm_static.yml``)."""
    user_props: dict[str, str] = field(default_factory=dict)
    io_channels: dict[int, str] = field(default_factory=dict)
    label_blocks: dict[str, list[str]] = field(default_factory=dict)
    early_globals: list[str] = field(default_factory=list)
    globals: list[str] = field(default_factory=list)
    setups: list[dict[str, str]] = field(default_factory=list)
    once: list[dict[str, str]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    after_setup: list[dict[str, str]] = field(default_factory=list)
    """Operations with neither a one-shot nor a periodic step: reported once every setup succeeded."""
    labels: dict[int, str] = field(default_factory=dict)
    """Operation index → its console label (the ``rac: <label> ok`` lines)."""
    threads: dict[str, list[ThreadPart]] = field(default_factory=dict)
    locks: dict[str, bool] = field(default_factory=dict)
    heap_floor: int = 0
    """The smallest system heap a driver the app uses needs (``heap_at_least``)."""
    dma_channels: dict[str, dict[str, str]] = field(default_factory=dict)
    """Node label → its DMA channels by name, in the order added (the node's ``dmas``/``dma-names``)."""
    rx_owners: dict[str, int] = field(default_factory=dict)
    """UART node label → index of the operation that owns its receiver (one receive path per UART)."""
    realized: list[str] = field(default_factory=list)

    def need(self, family: str, *symbols: str) -> None:
        """Enable the family's Kconfig symbols (plus ``symbols``), remembering which family asked."""
        for symbol in (*KCONFIG.get(family, ()), *symbols):
            self.kconfig.setdefault(symbol, family)

    def setting(self, family: str, symbol: str, value: str) -> None:
        """Set Kconfig ``symbol`` to ``value`` (a C/Kconfig literal: a number, ``"text"``, ``n``)."""
        self.settings[symbol] = (family, value)

    def dma(self, label: str, name: str, cells: str) -> None:
        """Give node ``label`` the DMA channel ``name`` (``rx``/``tx``) at ``cells`` (``<&dma1 5 4 …>``).

        A node has one ``dmas`` and one ``dma-names`` property holding every channel (the devicetree block,
        ``dma_periph_rx`` and ``spi_transfer`` may each name one of them): the two lines are written where the
        first channel was added and rewritten as channels join; a second, different channel under one name is
        a conflict the lowering refuses.
        """
        block = self.label_blocks.setdefault(label, ['status = "okay";'])
        channels = self.dma_channels.setdefault(label, {})
        if name in channels:
            if channels[name] != cells:
                raise unsupported(label, f"{label} would get two DMA channels named {name}: {channels[name]} and "
                                  f"{cells}", [label, name], [])
            return
        first = not channels
        channels[name] = cells
        names = ", ".join(f'"{n}"' for n in channels)
        lines = (f"dmas = {', '.join(channels.values())};", f"dma-names = {names};")
        if first:
            block.extend(lines)
            return
        at = next(i for i, line in enumerate(block) if line.startswith("dmas = "))
        block[at : at + 2] = lines

    def heap_at_least(self, size: int) -> None:
        """A driver the app uses allocates from the system heap: ``CONFIG_HEAP_MEM_POOL_SIZE`` is at least ``size``
        (the plan's ``heap_bytes`` when larger)."""
        self.heap_floor = max(self.heap_floor, size)

    def okay(self, label: str, *lines: str) -> None:
        """Set ``&label { status = "okay"; … }`` in the overlay, adding ``lines`` once each."""
        block = self.label_blocks.setdefault(label, ['status = "okay";'])
        for line in lines:
            if line not in block:
                block.append(line)


def unsupported(location: str, message: str, objects: list[str], relax: list[Relaxation]) -> LoweringError:
    """The error for a plan detail Zephyr cannot realize on this board, with its relaxations."""
    return LoweringError(
        [
            Evidence(
                code="E_TARGET_UNSUPPORTED",
                message=message,
                location=location,
                objects=objects,
                relaxations=relax,
            )
        ]
    )


def dt_property(name: str) -> str:
    """Devicetree property names use dashes (``app-led-gpios``); C macros spell them with underscores."""
    return name.replace("_", "-")


def alias_macro(alias: str) -> str:
    """Devicetree macros spell ``pwm-led0`` as ``pwm_led0``."""
    return alias.replace("-", "_")
