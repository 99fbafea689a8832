"""The target model: a chip plus its board, as *data*.

The nouns mirror the hardware (memory regions, bus masters, DMA controllers, peripherals, pins,
clocks, board resources). Rules never ask "is this an stm32h743?"; they ask the facts ("can DMA1
reach this region?", "does the core have a D-cache, and how long is its line?"). Loaded once per
process from a board pack ``targets/boards/<id>/`` on its chip pack ``targets/chips/<chip>/`` (see
``facts.load``), never by parsing an SVD at run time.
Plain frozen dataclasses inside; pydantic validates them only at the file boundary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ConfigDict, with_config

from rac_fw.domains.firmware.facts.chip import (
    Adc,
    BusPrescalers,
    DebugId,
    Dmamux,
    HalDriver,
    Interrupts,
    KernelTick,
    Nvic,
    Pinctrl,
    Pll,
    Pwm,
    QemuMachine,
    SerialBus,
    Timer,
    Uart,
    Watchdog,
)
from rac_fw.domains.firmware.facts.crypto import CryptoFacts
from rac_fw.domains.firmware.facts.network import Network
from rac_fw.domains.firmware.facts.power import PowerFacts
from rac_fw.domains.firmware.facts.radio import Radio
from rac_fw.domains.firmware.facts.storage import FlashFacts

#: Fact packs are validated against these dataclasses (``facts.load``); unknown keys are errors, so a
#: typo in a ``chip.yaml`` or ``board.yaml`` is reported instead of silently dropping a fact.
_STRICT = ConfigDict(extra="forbid")


@with_config(_STRICT)
@dataclass(frozen=True)
class BusMaster:
    """Something that issues memory transactions: the CPU, a DMA controller, nRF EasyDMA, ESP32 GDMA."""

    name: str
    kind: str
    """``cpu``, ``dma``, ``mdma``, ``bdma``, ``easydma`` or ``gdma``."""
    description: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class MemoryRegion:
    """A contiguous address range with one kind and one set of properties."""

    name: str
    """Name as in the reference manual, e.g. ``SRAM1``, ``DTCM``, ``AXI_SRAM``, ``CCM``."""
    address: int
    size: int
    kind: str
    """``flash``, ``sram``, ``dtcm``, ``itcm``, ``ccm``, ``backup``, ``psram``, ``rom``."""
    cacheable: bool
    """True when the core's D-cache caches this region under the default memory attributes."""
    executable: bool
    reachable_by: tuple[str, ...]
    """Bus-master names that can read/write this region (``cpu`` always listed explicitly)."""
    dma_capable: bool = False
    """ESP-IDF notion: internal SRAM that GDMA may use (``MALLOC_CAP_DMA``). Informational elsewhere."""
    notes: str = ""
    dt_label: str | None = None
    """Devicetree node label of the region in Zephyr (``sram1``, ``dtcm``), used to place buffers."""
    dt_covers: tuple[str, ...] = ()
    """Other regions the same devicetree memory node spans. Zephyr's STM32F407 ``sram0`` is SRAM1 +
    SRAM2 (128 KB at 0x20000000): a framework that places data by devicetree node sees one pool,
    while a linker script written from these facts still maps SRAM1 and SRAM2 separately."""

    @property
    def end(self) -> int:
        return self.address + self.size

    def contains(self, address: int, size: int = 1) -> bool:
        return self.address <= address and address + size <= self.end


@with_config(_STRICT)
@dataclass(frozen=True)
class Cache:
    """A core cache. ``line_bytes`` drives DMA buffer alignment and maintenance granularity."""

    kind: str
    """``dcache`` or ``icache``."""
    size: int
    line_bytes: int


@with_config(_STRICT)
@dataclass(frozen=True)
class Core:
    """The CPU core: architecture, FPU, MPU, caches and interrupt-priority width."""

    name: str
    """``cortex-m4f``, ``cortex-m7f``, ``xtensa-lx7``, ``host``."""
    arch: str
    """GCC ``-mcpu`` value or equivalent: ``cortex-m4``, ``cortex-m7``, ``xtensa``, ``x86_64``."""
    fpu: str | None
    """GCC ``-mfpu`` value on Arm (``fpv4-sp-d16``, ``fpv5-d16``), ``single`` on Xtensa LX7, or None."""
    mpu: bool
    caches: tuple[Cache, ...] = ()
    nvic_priority_bits: int | None = None
    """Implemented NVIC priority bits (4 on STM32, 3 on nRF52); None on non-ARM cores."""

    @property
    def dcache(self) -> Cache | None:
        return next((c for c in self.caches if c.kind == "dcache"), None)


@with_config(_STRICT)
@dataclass(frozen=True)
class DmaController:
    """A DMA engine and the constraints a plan must respect."""

    name: str
    master: str
    """The ``BusMaster`` this controller issues transactions as."""
    memory_to_memory: bool
    max_transfer_items: int
    """Largest item count for one transfer (e.g. 65535 on STM32 DMA NDTR)."""
    alignment_bytes: int = 1
    """Minimum buffer alignment the controller needs (before any cache-line requirement)."""
    notes: str = ""
    channels: int = 0
    """Independent streams/channels the controller offers (0 when not modelled, e.g. per-peripheral EasyDMA)."""
    peripherals: tuple[str, ...] = ()
    """Peripheral instances (or groups) whose requests this controller serves; empty means "any"."""
    requests: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict, hash=False)
    """Fixed request mapping (STM32F4, RM0090 Tables 42/43): request (``USART2_RX``) → the
    ``(stream, channel)`` pairs that carry it, preferred first. Empty when requests are routed
    freely (STM32H7 DMAMUX, nRF EasyDMA, ESP32 GDMA)."""

    zephyr_blocks: int = 1
    """``dma_block_config`` entries one ``dma_config`` may chain on the Zephyr driver (``dma_stm32`` programs
    ``head_block`` only: 1; ``dma-emul`` keeps block i in request slot i, so up to ``dma-requests``)."""
    zephyr_status: bool = True
    """The Zephyr driver implements ``dma_get_status`` (``dma-emul`` answers -ENOSYS)."""
    zephyr_request_slots: bool = False
    """The Zephyr node needs ``dma-channels`` and ``dma-requests`` from the overlay (``zephyr,dma-emul``:
    ``dma-requests`` defaults to 1 and must cover the chained blocks)."""
    zephyr_kconfig: tuple[str, ...] = ()
    """Kconfig symbols (without ``CONFIG_``) a Zephyr application using this controller sets: the
    emulator's driver (``DMA_EMUL``) and, on a 64-bit host build, 64-bit DMA addresses (``DMA_64BIT``)."""

    def routes(self, request: str) -> tuple[tuple[int, int], ...]:
        """The ``(stream, channel)`` pairs that carry ``request`` on this controller (empty: none fixed)."""
        return self.requests.get(request, ())


@with_config(_STRICT)
@dataclass(frozen=True)
class Field:
    """A bit field of a register (SVD ``<field>``): bits ``lsb`` .. ``lsb + width - 1``."""

    name: str
    lsb: int
    width: int
    description: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class Register:
    """A peripheral register: byte ``offset`` from the instance base, reset value, SVD access string."""

    name: str
    offset: int
    size_bits: int
    reset: int
    access: str
    """``read-write``, ``read-only``, ``write-only``… as in the SVD."""
    fields: tuple[Field, ...] = ()


@with_config(_STRICT)
@dataclass(frozen=True)
class Interrupt:
    """A device interrupt: vector name and IRQ number (exception number - 16 on Arm)."""

    name: str
    number: int


@with_config(_STRICT)
@dataclass(frozen=True)
class Peripheral:
    """A peripheral instance as the SVD describes it (plus clock-gate facts where known)."""

    name: str
    group: str
    base: int
    interrupts: tuple[Interrupt, ...] = ()
    registers: tuple[Register, ...] = ()
    """Empty in ``load_target`` (kept lean so loading stays fast); ``facts.load.peripheral(target_id,
    name)`` returns the instance with its registers, for the groups the SVD import keeps."""
    derived_from: str | None = None
    """The instance whose register layout this one shares (SVD ``derivedFrom``)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class PinFunction:
    """One signal a pin can carry, e.g. ``USART1_TX`` via alternate function 7."""

    signal: str
    af: int | None = None
    """STM32 alternate-function number; None for analog/additional functions and PSEL/matrix chips."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Pin:
    """A package pin and every signal it can carry."""

    name: str
    """``PA9``, ``P0.13``, ``GPIO4``."""
    functions: tuple[PinFunction, ...] = ()
    analog: tuple[str, ...] = ()
    """Analog inputs this pin is, e.g. ``ADC1_IN9`` or ``AIN0``."""
    reserved: str | None = None
    """Why the pin must not be used (flash/PSRAM, SWD, crystal…), or None."""
    strapping: bool = False
    notes: str = ""
    routing: str = "af"
    """How digital signals reach the pin: ``af`` (STM32 alternate-function mux: only the listed
    ``functions``), ``psel`` (nRF: any digital peripheral signal through PSEL registers) or ``matrix``
    (ESP32 GPIO matrix: any routable signal). ``host`` for native_sim's emulated GPIO."""
    requires: tuple[str, ...] = ()
    """Configuration needed before the pin can be used as GPIO (e.g. ``CONFIG_NFCT_PINS_AS_GPIOS``)."""

    def af(self, signal: str) -> int | None:
        """The alternate-function number that routes ``signal`` to this pin (None if not via AF)."""
        return next((f.af for f in self.functions if f.signal == signal), None)

    def can_carry(self, signal: str) -> bool:
        """True when ``signal`` can be routed to this pin: listed explicitly, or by PSEL/matrix routing."""
        if signal in self.analog or any(f.signal == signal for f in self.functions):
            return True
        return self.routing in ("psel", "matrix", "host") and not signal.startswith(("ADC", "AIN"))


@with_config(_STRICT)
@dataclass(frozen=True)
class ClockDomain:
    """A clock (``SYSCLK``, ``HCLK``, ``APB1``…) with its limit and the frequency each framework sets."""

    name: str
    max_hz: int
    default_hz: dict[str, int] = field(default_factory=dict)
    """Framework name (``zephyr``, ``hal``, ``baremetal``, ``espidf``) → frequency after its clock setup."""
    parent: str | None = None
    """The clock this one is divided from (``APB1`` ← ``HCLK``), or None for a root/source."""
    notes: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class BoardLed:
    """A user LED on the board: the chip pin driving it and its polarity."""

    name: str
    pin: str
    active_low: bool
    dt_label: str | None = None
    """Devicetree alias/label, e.g. ``led0``."""


@with_config(_STRICT)
@dataclass(frozen=True)
class BoardButton:
    """A user button on the board: the chip pin reading it and its polarity."""

    name: str
    pin: str
    active_low: bool
    dt_label: str | None = None


@with_config(_STRICT)
@dataclass(frozen=True)
class BoardPwmLed:
    """A ``pwm-leds`` child of the board devicetree: the PWM channel that dims the LED on ``pin``."""

    node: str
    """Its node label (``pwm_led0``, ``red_pwm_led``); a plan's ``output:`` may name it."""
    pin: str
    pwm: str
    """The PWM controller node driving it (``pwm0``, ``pwm12``)."""
    channel: int
    alias: str | None = None
    """Its devicetree alias (``pwm-led0``), if the board defines one."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Module:
    """The module the chip sits in on this board (ESP32-S3-WROOM-1-N8R8): its flash and PSRAM."""

    name: str
    flash_bytes: int
    psram_bytes: int = 0
    psram_mode: str | None = None
    """``quad`` or ``octal``; an octal PSRAM takes GPIO33-37 on the ESP32-S3."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Console:
    """The UART the board routes to the host (ST-LINK/J-Link VCP, USB-UART bridge) and its default rate."""

    uart: str
    """Peripheral instance name as in the SVD (``USART3``, ``UARTE0``, ``UART0``)."""
    tx: str
    rx: str
    baud: int


@with_config(_STRICT)
@dataclass(frozen=True)
class Board:
    """The board around the chip: what it wires to pins and how each framework names it."""

    name: str
    zephyr_board: str | None
    """Zephyr board target for ``west build -b`` (``nucleo_h743zi``, ``nrf52840dk/nrf52840``)."""
    idf_target: str | None
    """ESP-IDF ``idf.py set-target`` name, or None for non-Espressif chips."""
    hal_family: str | None
    """``STM32F4``/``STM32H7`` for the STM32Cube HAL, else None."""
    leds: tuple[BoardLed, ...] = ()
    buttons: tuple[BoardButton, ...] = ()
    console: Console | None = None
    dt_aliases: dict[str, str] = field(default_factory=dict)
    dt_node_labels: tuple[str, ...] = ()
    reserved_pins: dict[str, str] = field(default_factory=dict)
    """Pins the board wires to something (pin → what), e.g. the ST-LINK VCP or the crystal.
    LED and button pins are not repeated here (see ``leds``/``buttons``)."""
    dt_chosen: dict[str, str] = field(default_factory=dict)
    """Devicetree ``/chosen`` entries (``zephyr,console`` → ``usart3``)."""
    vendor_name: str = ""
    """The board's marketing name (``NUCLEO-H743ZI``)."""
    pyocd_target: str | None = None
    """pyOCD's name for the board's exact part: a built-in target (``stm32h743xx``) or, when only a
    CMSIS pack provides it, the pack's part name (``stm32f407vgtx``, see ``Target.debug``)."""
    platformio_platform: str | None = None
    """PlatformIO development platform (``ststm32``), None when PlatformIO has no board for it."""
    platformio_board: str | None = None
    """PlatformIO board id (``nucleo_h743zi``)."""
    platformio_frameworks: tuple[str, ...] = ()
    """rac-fw frameworks PlatformIO builds for this board (its board manifest's frameworks)."""
    pwm_leds: tuple[BoardPwmLed, ...] = ()
    module: Module | None = None
    adc_default_pin: str | None = None
    """The analog input a plan naming no ADC pin gets: the board's devicetree ADC channel (Arduino A0)."""
    adc_prescaler: dict[str, int] = field(default_factory=dict)
    """Framework → the ADC clock prescaler the board's devicetree sets (``st,adc-prescaler``)."""
    zephyr_defconfig: tuple[str, ...] = ()
    """Kconfig symbols (without ``CONFIG_``) the board's Zephyr defconfig and ``Kconfig.defconfig`` set ``y``:
    what an app gets without asking (native_sim: the console only; no serial, GPIO or I2C driver). Empty: not
    recorded (the verifier then assumes the common boards' GPIO, serial and console)."""
    zephyr_driver_needs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Driver class symbol → what this board's driver for it needs besides (native_sim's I2C and SPI
    controllers are emulators: ``I2C: [EMUL]``, since ``I2C_EMUL`` depends on ``EMUL``)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Target:
    """A target: one chip on one board (a board pack merged over the chip pack it names)."""

    id: str
    """Target id, the board pack's folder name under ``targets/boards/`` (``stm32h743``); plans name it."""
    name: str
    vendor: str
    family: str
    """Chip family (``STM32H7``, ``nRF52``, ``ESP32-S3``, ``POSIX``)."""
    core: Core
    frameworks: tuple[str, ...]
    """Lowering frameworks this target supports, first is the default."""
    memory: tuple[MemoryRegion, ...]
    bus_masters: tuple[BusMaster, ...]
    dma: tuple[DmaController, ...]
    clocks: tuple[ClockDomain, ...]
    pins: dict[str, Pin]
    board: Board
    peripherals: dict[str, Peripheral] = field(default_factory=dict)
    adc: Adc | None = None
    timers: dict[str, Timer] = field(default_factory=dict)
    """Hardware timers by instance name (``TIM2``, ``TIMER1``, ``TIMG0_T0``)."""
    watchdogs: dict[str, Watchdog] = field(default_factory=dict)
    """Watchdogs by name (``IWDG``, ``WDT``, ``MWDT0``, ESP-IDF ``TASK_WDT``)."""
    pwm: Pwm | None = None
    uart: Uart | None = None
    i2c: SerialBus | None = None
    spi: SerialBus | None = None
    nvic: Nvic | None = None
    interrupts: Interrupts | None = None
    """An interrupt system other than the NVIC (ESP32 interrupt matrix, native_sim's simulated one)."""
    kernel_ticks: dict[str, KernelTick] = field(default_factory=dict)
    """Framework → its RTOS kernel tick on this chip."""
    dmamux: dict[str, Dmamux] = field(default_factory=dict)
    """DMA request multiplexers by name (``DMAMUX1``)."""
    pinctrl: Pinctrl | None = None
    debug: DebugId | None = None
    qemu: QemuMachine | None = None
    dt_reg: dict[str, int] = field(default_factory=dict)
    """Devicetree node label → unit address (``i2c0`` → 0x40003000), tying a plan's controller label
    to its SVD peripheral block."""
    cache_enabled: dict[str, bool] = field(default_factory=dict)
    """Framework → whether it enables the D-cache (a framework not listed: yes)."""
    pll: Pll | None = None
    """The main PLL's legal settings (STM32F4), which a clock setup derives its M/N/P/Q from."""
    bus_prescalers: BusPrescalers | None = None
    hal: HalDriver | None = None
    """The STM32Cube HAL driver package and its IP generations (``facts/chip.py``, chip ``hal:``)."""
    boot_address: int | None = None
    """Where the core fetches its vector table after reset, when not the start of the first flash region."""
    power: PowerFacts | None = None
    """Power states, their wake sources and RAM retention (``facts/power.py``, chip ``power:``)."""
    crypto: CryptoFacts | None = None
    """Crypto accelerators and each framework's backend (``facts/crypto.py``, chip ``crypto:``)."""
    flash: FlashFacts | None = None
    """The flash's geometry (chip) and the board's partition maps of it (``facts/storage.py``, pack
    ``extra.flash``); None when the pack describes no flash."""
    radio: Radio | None = None
    """The chip's radios and what their stacks accept (``facts/radio.py``, pack ``extra.radio``); None: no radio."""
    network: Network | None = None
    """The board's IP interfaces per framework and the stacks' limits (``facts/network.py``, pack
    ``extra.network``); None: no IP networking under any framework."""
    svd_device: str | None = None
    """Device name in the SVD the peripherals were imported from (None: no SVD, e.g. native_sim)."""
    irq_count: int = 0
    """Number of device interrupt vectors after the 16 system exceptions (highest IRQn + 1)."""
    chip: str = ""
    """The chip pack's folder name under ``targets/chips/`` (``nrf52840``), shared by every board on it."""
    sdk: dict[str, str] = field(default_factory=dict)
    """Framework → the SDK release the output is written for (``zephyr: "3.7"``), set by
    ``facts.sdk.for_release`` from ``--zephyr-version``; a framework not listed: its default release."""

    def region(self, name: str) -> MemoryRegion | None:
        return next((r for r in self.memory if r.name == name), None)

    def region_at(self, address: int) -> MemoryRegion | None:
        return next((r for r in self.memory if r.contains(address)), None)

    def regions_reachable_by(self, master: str) -> list[MemoryRegion]:
        """One rule, one place: which regions a bus master can reach."""
        return [r for r in self.memory if master in r.reachable_by]

    def clock(self, name: str) -> ClockDomain | None:
        return next((c for c in self.clocks if c.name == name), None)

    def dma_controller(self, name: str) -> DmaController | None:
        return next((d for d in self.dma if d.name == name), None)

    def pinctrl_label(self, pin: str, signal: str) -> str | None:
        """The devicetree pinctrl node label routing ``signal`` to ``pin`` (``adc1_inp15_pa3``).

        Derived, not listed: ``pinctrl.label_format`` (``{signal}_{pin}``, lower case on STM32,
        where Zephyr's generated ``*-pinctrl.dtsi`` names every signal of every pin this way). None
        when the chip has no such rule (nRF/ESP32 pinctrl is per-board groups) or the pin cannot
        carry the signal.
        """
        found = self.pins.get(pin)
        if self.pinctrl is None or found is None:
            return None
        if signal not in found.analog and all(f.signal != signal for f in found.functions):
            return None
        return self.pinctrl.label_format.format(signal=signal, pin=pin).lower()

    def pins_for(self, signal: str) -> list[Pin]:
        """Pins that can carry ``signal`` (explicitly listed, analog, or via PSEL/matrix routing)."""
        return [p for p in self.pins.values() if p.can_carry(signal)]
