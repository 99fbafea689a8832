"""Typed facts about a chip's blocks beyond memory, DMA and clocks: watchdogs, ADC, timers, PWM, UART,
I2C/SPI controllers, interrupt priorities, the RTOS kernel tick, the DMA request multiplexer, pinctrl
naming, silicon identity and the QEMU model.

Each class is named after the hardware it describes and each field says what it is and where its
unit comes from, so a pack author knows what to write and a rule knows what it reads. They are
fields of :class:`~.model.Target`, loaded strictly from ``chip.yaml`` like the rest of the model (an
unknown key is a located ``TargetFileError``). A missing optional fact is ``None`` (or empty), and
the rules asking it do not judge what they cannot compute.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ConfigDict, with_config

_STRICT = ConfigDict(extra="forbid")


@with_config(_STRICT)
@dataclass(frozen=True)
class Watchdog:
    """A watchdog: a hardware one (IWDG, WWDG, nRF WDT, ESP32 MWDT) or a framework's software one
    (ESP-IDF task/interrupt watchdog, marked by ``framework``)."""

    clock: str | None = None
    """The clock domain it counts (``LSI``, ``LFCLK``, ``APB1``), a name in ``Target.clocks``."""
    clock_hz: int | None = None
    """Its counting clock in Hz when fixed (LSI 32 kHz, LFCLK 32.768 kHz)."""
    prescalers: tuple[int, ...] = ()
    """The discrete prescaler settings (STM32 IWDG /4../256)."""
    prescaler_min: int | None = None
    """Smallest prescaler when it is a range (ESP32 MWDT: 2)."""
    prescaler_max: int | None = None
    """Largest prescaler when it is a range (ESP32 MWDT: 65535)."""
    reload_max: int | None = None
    """Largest reload value (STM32 IWDG RLR: 4095)."""
    crv_min: int | None = None
    """Smallest counter reload value (nRF WDT CRV >= 15)."""
    crv_max: int | None = None
    """Largest counter reload value (nRF WDT CRV: 32 bit)."""
    counter_bits: int | None = None
    """Down-counter width (STM32 WWDG: 7 bit)."""
    stage_bits: int | None = None
    """Width of each stage's timeout register (ESP32 MWDT: 32 bit)."""
    divider: int | None = None
    """Fixed clock divider before the prescaler (STM32 WWDG: PCLK/4096)."""
    min_timeout_ms: float | None = None
    """Shortest timeout it can be set to, in ms."""
    max_timeout_ms: float | None = None
    """Longest timeout it can be set to, in ms."""
    default_timeout_ms: float | None = None
    """The framework's default timeout, in ms (ESP-IDF task watchdog 5 s)."""
    reload_registers: int | None = None
    """Independent reload-request registers (nRF WDT RR[0..7]: 8)."""
    shared_reload: bool = False
    """Every feeder shares one timeout (one reload value / one counter), so two timeouts cannot coexist."""
    stoppable: bool | None = None
    """Whether it can be stopped once started (nRF WDT: no); None when not stated."""
    expiry_callback: bool | None = None
    """Whether Zephyr's driver for it runs ``wdt_timeout_cfg.callback`` from an expiry interrupt before the
    reset (nRF WDT: yes, from its TIMEOUT interrupt; STM32 IWDG: no interrupt, install_timeout returns
    -ENOTSUP for a callback); None when not stated (treated as no)."""
    ram_retained_on_reset: bool | None = None
    """Whether RAM outside .bss/.data (``__noinit``) keeps its contents across this watchdog's reset, so a
    word the expiry callback writes is readable on the next boot; None when not stated (treated as no)."""
    framework: str | None = None
    """The framework providing this (software) watchdog; None for the hardware ones."""
    dt_label: str | None = None
    """Its devicetree node label (``iwdg1``, ``wdt0``)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class AdcReference:
    """The ADC's internal reference, as the gain settings see it (nRF SAADC 0.6 V, VDD/4)."""

    internal_mv: int
    """The internal reference in mV."""
    vdd_fraction: float | None = None
    """The VDD-derived reference as a fraction of VDD (nRF SAADC VDD/4: 0.25)."""
    zephyr_property: str | None = None
    """The devicetree property the Zephyr driver reads it from (``ref-internal-mv`` on the ADC emulator)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Adc:
    """The chip's ADC units: what they convert, how fast, and how the frameworks name them."""

    units: tuple[str, ...]
    """The ADC instances (``ADC1``…, ``SAADC``, ``adc0``), first is the default."""
    resolution_bits: tuple[int, ...]
    """Resolutions a conversion can be set to, in bits."""
    channels: int | dict[str, int] | None = None
    """Input channels: one count for the chip, or per unit."""
    vref_mv: int | None = None
    """The board's VREF+ in mV (STM32), full scale of a conversion."""
    reference: AdcReference | None = None
    gains: tuple[str, ...] = ()
    """Gain settings (nRF SAADC ``1/6`` .. ``4``)."""
    inputs: dict[str, str] = field(default_factory=dict)
    """Analog input → pin (nRF ``AIN0`` → ``P0.02``)."""
    attenuation_db: tuple[float, ...] = ()
    """Input attenuation settings in dB (ESP32 ``0``, ``2.5``, ``6``, ``12``)."""
    full_scale_mv: dict[str, int] = field(default_factory=dict)
    """Attenuation (dB, as text) → full-scale input in mV (ESP32)."""
    max_clock_hz: int | None = None
    """The ADC kernel clock limit in Hz."""
    clock: str | None = None
    """The clock domain the ADC prescaler divides."""
    clock_prescalers: tuple[int, ...] = ()
    """The ADC clock prescaler settings."""
    internal_channels: dict[str, str] = field(default_factory=dict)
    """Internal signal (``TEMP``, ``VREFINT``, ``VBAT``) → the unit's input carrying it (``ADC1_IN16``)."""
    dma: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Unit → the DMA controllers that serve its requests, preferred first (STM32H7 ADC3: BDMA first)."""
    zephyr_node: str | None = None
    """The Zephyr devicetree node label of the single ADC (``adc``)."""
    zephyr_nodes: dict[str, str] = field(default_factory=dict)
    """Unit → Zephyr devicetree node label, when there are several (ESP32-S3 ``ADC1`` → ``adc0``)."""
    compatible: str | None = None
    """The devicetree compatible of an emulated ADC (``zephyr,adc-emul``)."""
    oversampling_max: int = 0
    """log2 of the largest hardware averaging ratio (nRF SAADC OVERSAMPLE 8: 256 samples); 0: none
    (STM32F4, whose Zephyr node says ``st,adc-oversampler = "none"``). Zephyr's ``zephyr,oversampling``."""
    acquisition_us: tuple[int, ...] = ()
    """Acquisition (sample-and-hold) times in microseconds the unit offers (nRF SAADC TACQ)."""
    acquisition_ticks: tuple[int, ...] = ()
    """Acquisition times in ADC clock cycles the unit offers (the Zephyr node's ``sampling-times``)."""
    differential: bool = False
    """The unit converts the difference of two inputs (nRF SAADC MODE = Diff)."""
    calibration: bool = False
    """The Zephyr driver calibrates when a read sequence asks (``adc_sequence.calibrate``: nRF SAADC offset)."""
    notes: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class Timer:
    """A hardware counter usable as a timer or PWM time base."""

    bits: int
    """Counter width in bits."""
    kind: str
    """``advanced``, ``general``, ``basic`` (STM32), ``timer`` / ``rtc`` (nRF), ``system`` (a kernel's
    own timer, never handed to a plan)."""
    clock: str | None = None
    """The clock domain it counts (``APB1_TIM``, ``PCLK16M``), a name in ``Target.clocks``."""
    channels: int | None = None
    """Capture/compare channels."""
    prescalers: tuple[int, ...] = ()
    """Discrete prescaler settings (nRF TIMER 2^0..2^9); empty when it is a ``prescaler_bits`` range."""
    prescaler_bits: int | None = None
    """Prescaler register width when any integer 1..2^bits divides (STM32 PSC 16 bit: the default)."""
    dt_label: str | None = None
    """Its devicetree node label, when it differs from the instance name (``timer0``)."""
    zephyr_counter: str | None = None
    """The Zephyr node implementing the counter API, when a plan may use it: a label (``rtc2``, a
    ``nordic,nrf-rtc``), or ``<label>/<child>`` for a child node (``timers2/counter``, the
    ``st,stm32-counter`` child of an ``st,stm32-timers`` node). None: no counter for plans (the radio
    stack's or the kernel's own timer). It ticks at ``clock`` undivided: the devicetree defaults the packs
    cite leave the prescaler at its identity (nRF TIMER ``prescaler = <0>``, RTC ``prescaler = <1>``, STM32
    ``st,prescaler = <0>``)."""
    notes: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class PwmUnit:
    """A dedicated PWM peripheral of a chip whose PWM is not a timer channel (ESP32 LEDC, MCPWM)."""

    channels: int | None = None
    timers: int | None = None
    """Time bases the unit's channels share (LEDC: 4)."""
    max_resolution_bits: int | None = None
    """Duty resolution limit; frequency x 2^resolution must not exceed the source clock (LEDC: 14)."""
    clock: str | None = None
    clock_hz: int | None = None
    units: int | None = None
    """Instances of this unit (MCPWM: 2)."""
    dt_label: str | None = None
    dt_labels: tuple[str, ...] = ()


@with_config(_STRICT)
@dataclass(frozen=True)
class Pwm:
    """PWM outside the general-purpose timers: the nRF PWM blocks (a 15-bit COUNTERTOP on a power-of-two
    prescaled clock) or named PWM units (ESP32 LEDC/MCPWM). STM32 PWM is a timer channel (``Timer``)."""

    instances: tuple[str, ...] = ()
    """PWM block instances (nRF ``PWM0``..``PWM3``)."""
    counter_bits: int | None = None
    countertop_max: int | None = None
    """Largest COUNTERTOP (nRF: 32767)."""
    base_clock: str | None = None
    """The clock the prescaler divides (nRF ``PCLK16M``)."""
    prescalers: tuple[int, ...] = ()
    channels_per_instance: int | None = None
    units: dict[str, PwmUnit] = field(default_factory=dict)
    """Named PWM peripherals (ESP32 ``LEDC``, ``MCPWM``)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class UartInstance:
    """One UART instance: its kernel clock and, when a framework's driver restricts it, the API modes."""

    clock: str | None = None
    """The clock domain feeding its baud-rate generator (``APB1``), a name in ``Target.clocks``."""
    clock_hz: int | None = None
    """Its kernel clock in Hz when fixed independently of the clock tree."""
    api_modes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Framework → the UART API modes (``poll``, ``interrupt``, ``async``) its driver of this instance
    supports; a framework not listed supports all (native_sim's PTY UART: Zephyr ``poll`` only)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Uart:
    """The chip's UARTs and how their baud-rate generator divides."""

    instances: dict[str, UartInstance] = field(default_factory=dict)
    oversampling: tuple[int, ...] = ()
    """Oversampling ratios, the one the lowerings configure first (STM32: 16, then 8)."""
    divider_fraction_bits: int = 0
    """Fractional bits of the baud divider (ESP32: 4); 0 for an integer divider."""
    divider_max: int = 0xFFFF
    """Largest integer part of the divider."""
    baud_table: dict[int, int] = field(default_factory=dict)
    """Discrete rate settings (nRF UARTE): requested rate → the rate it really produces; when set, only
    these rates exist."""
    baudrate_register: dict[int, int] = field(default_factory=dict)
    """Requested rate → the BAUDRATE register value (nRF UARTE, the SVD's enumerated values)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class BusInstance:
    """One I2C or SPI controller instance: its kernel clock, and its own limits when they differ."""

    clock: str | None = None
    """The clock domain its SCL/SCK generator divides (``APB1``, ``PER_CK``)."""
    max_hz: int | None = None
    frequencies_hz: tuple[int, ...] = ()


@with_config(_STRICT)
@dataclass(frozen=True)
class SerialBus:
    """The chip's I2C (or SPI) controllers: the bus clock limits and settings they offer."""

    max_hz: int | None = None
    """Highest bus clock in Hz (I2C 400 kHz on the F4, 1 MHz Fast-mode Plus on the H7)."""
    frequencies_hz: tuple[int, ...] = ()
    """Discrete bus clock settings (nRF TWIM 100/250/400 kHz); empty when derived by a divider."""
    prescalers: tuple[int, ...] = ()
    """Kernel-clock prescalers for the bus clock (STM32 SPI BR: /2../256)."""
    instances: dict[str, BusInstance] = field(default_factory=dict)
    zephyr_target: bool = False
    """The Zephyr driver of these controllers implements I2C target (slave) mode: ``i2c_target_register``
    under ``CONFIG_I2C_TARGET`` (STM32 ``i2c_ll_stm32``); nRF TWIM needs the separate TWIS peripheral."""


@with_config(_STRICT)
@dataclass(frozen=True)
class KernelIrqLevels:
    """What an RTOS reserves of the NVIC priorities (Zephyr arch/arm ``_IRQ_PRIO_OFFSET``)."""

    irq_prio_offset: int
    irq_prio_offset_zero_latency: int
    max_irq_priority: int
    """Highest ``IRQ_CONNECT`` priority number a kernel-aware interrupt may use."""
    max_irq_priority_zero_latency: int
    zero_latency_priority: int


@with_config(_STRICT)
@dataclass(frozen=True)
class Nvic:
    """The Arm NVIC: implemented priority bits and what each RTOS reserves of them."""

    priority_bits: int
    levels: int
    """Priority levels (2^priority_bits)."""
    kernel_levels: dict[str, KernelIrqLevels] = field(default_factory=dict)
    """Framework → the levels its kernel reserves."""
    software_irq: int | None = None
    """A line software may pend for its own use (``sw_irq``): one no peripheral of the chip ever raises (a
    vector reserved on this part, or a line the vendor provides for software), with its source cited."""


@with_config(_STRICT)
@dataclass(frozen=True)
class SoftwareInterrupt:
    """A CPU interrupt only software raises (``sw_irq`` on ESP-IDF): the Xtensa software interrupts, which
    ``esp_intr_alloc`` attaches by their framework source and code pends through the core's INTSET register."""

    level: int
    """Its fixed priority level (ESP32-S3: 1 for CPU interrupt 7, 3 for 29)."""
    cpu_line: int
    """The CPU interrupt number (the INTSET/INTCLEAR bit)."""
    source: str
    """The framework's interrupt source for it (``ETS_INTERNAL_SW0_INTR_SOURCE``)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Interrupts:
    """An interrupt system that is not an NVIC: the ESP32 interrupt matrix, a simulated controller."""

    levels: int | None = None
    """Priority levels (ESP32-S3: 7)."""
    rtos_safe_max_level: int | None = None
    """Highest level whose handlers may call the RTOS (ESP-IDF: 3; 4+ need assembly handlers)."""
    c_callable_max_level: int | None = None
    """Highest level a C handler may run at."""
    cpu_interrupt_lines: int | None = None
    matrix_sources_in_svd: bool = False
    """The SVD's interrupts are interrupt-matrix sources, not CPU lines."""
    flags: dict[str, str] = field(default_factory=dict)
    """Named allocation flags of the framework (``iram`` → ``ESP_INTR_FLAG_IRAM``)."""
    simulated: bool = False
    """IRQs are simulated (native_sim)."""
    software: tuple[SoftwareInterrupt, ...] = ()
    """CPU interrupts nothing but software raises, lowest level first."""
    notes: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class KernelTick:
    """An RTOS's tick under one framework (Zephyr ``CONFIG_SYS_CLOCK_TICKS_PER_SEC``), set by the SoC."""

    sys_clock_ticks_per_sec: int
    timer: str
    """The hardware timer driving it (``SysTick``, ``RTC1``, ``SYSTIMER``)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Dmamux:
    """A DMA request multiplexer (STM32H7 DMAMUX1/2): which controllers it feeds and its request lines."""

    controllers: dict[str, int]
    """Controller → the mux channel of its first stream (DMAMUX1: DMA1 → 0, DMA2 → 8)."""
    requests: dict[str, int]
    """Request name (the plan's spelling, ``USART3_RX``) → its request-line ID."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Pinctrl:
    """How the devicetree names a pin's signal (hal_stm32 genpinctrl: ``{signal}_{pin}`` in lower case)."""

    label_format: str


@with_config(_STRICT)
@dataclass(frozen=True)
class ChipIdRegister:
    """A register that reads a fixed value on every part of the chip (DBGMCU_IDCODE.DEV_ID, FICR.INFO.PART)."""

    register: str
    address: int
    mask: int
    value: int


@with_config(_STRICT)
@dataclass(frozen=True)
class DebugId:
    """How a debug probe recognises the chip and names it."""

    part_prefix: str
    """The prefix of the probe tools' part names for this chip (``stm32f407``)."""
    chip_id: ChipIdRegister
    pyocd_pack: str | None = None
    """The CMSIS pack giving pyOCD the part when it has no built-in target (``Keil.STM32F4xx_DFP``)."""
    pyocd_pack_part: str | None = None
    """The part to ``pyocd pack install`` (``stm32f407vg``)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class QemuMachine:
    """The QEMU machine that models the chip closely enough to run its bare-metal images."""

    machine: str
    """The ``-M`` name (``netduinoplus2``: an STM32F405, the F407 memory map)."""
    emulator: str = "qemu-system-arm"
    """The QEMU system binary that has the machine."""
    serial_bases: tuple[int, ...] = ()
    """Base address of the UART behind QEMU's ``serial0``, ``serial1``… (QEMU 7.2
    ``hw/arm/stm32f405_soc.c`` ``usart_addr[]``); empty when not known."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Pll:
    """The main PLL's legal settings: f_VCO = f_in / M * N, SYSCLK = f_VCO / P, the 48 MHz clock f_VCO / Q."""

    m: tuple[int, int]
    """Smallest and largest input divider M."""
    n: tuple[int, int]
    """Smallest and largest multiplier N."""
    p: tuple[int, ...]
    """The SYSCLK dividers P."""
    q: tuple[int, int]
    """Smallest and largest 48 MHz-clock divider Q."""
    vco_in_hz: tuple[int, int]
    """Allowed VCO input range (f_in / M), in Hz."""
    vco_hz: tuple[int, int]
    """Allowed VCO output range, in Hz."""


@with_config(_STRICT)
@dataclass(frozen=True)
class BusPrescalers:
    """The divider settings of the bus clock prescalers (RCC HPRE/PPRE fields)."""

    ahb: tuple[int, ...]
    """HPRE (and on the STM32H7 D1CPRE) dividers."""
    apb: tuple[int, ...]
    """PPREx dividers."""


@with_config(_STRICT)
@dataclass(frozen=True)
class HalRtos:
    """How an RTOS shares the chip with the STM32Cube HAL (FreeRTOS through CMSIS-RTOS2, as CubeMX sets it up)."""

    timebase: str
    """The timer the HAL's 1 ms time base moves to (``HAL_InitTick`` on its update interrupt), because the
    kernel takes SysTick; a basic timer no plan operation may then claim (CubeMX's choice: ``TIM6``)."""
    max_syscall_priority: int
    """``configLIBRARY_MAX_SYSCALL_INTERRUPT_PRIORITY``: the most urgent NVIC priority (a number, lower is
    more urgent) whose handlers may call the kernel's ``FromISR`` API (CubeMX default 5)."""
    tick_rate_hz: int = 1000
    """``configTICK_RATE_HZ``: the kernel tick (1 ms, so ``osDelay`` counts milliseconds)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class HalDriver:
    """The STM32Cube HAL driver package of the chip and the generation of each IP block it drives.

    The HAL's init structures differ with the IP generation (ST's MCU database names each one, ``<IP
    Name=… Version=…>`` in the CubeMX MCU XML: ADC ``aditf2`` vs ``aditf5``, I2C ``i2c1`` vs ``i2c2``…), so
    the lowering and its templates ask these fields, never the chip family.
    """

    family: str
    """The driver package (``STM32F4``: ``stm32f4xx_hal_driver``, file prefix ``stm32f4xx``)."""
    release: str
    """The release the templates are written against (``STM32Cube HAL F4 v1.8.3``)."""
    msp_clocks: tuple[str, ...]
    """Clock gates ``HAL_MspInit`` opens (the MCU XML's SYS ``ClockEnableMode``: ``SYSCFG``, ``PWR``)."""
    clock_gates: dict[str, str] = field(default_factory=dict)
    """Instance → the RCC gate it shares when not its own (MCU XML ``ClockEnableMode``: H7 ``ADC1`` → ``ADC12``)."""
    oscillator_values: dict[str, int] = field(default_factory=dict)
    """Oscillator defaults the package's conf header needs beyond HSE/HSI/LSE/LSI, in Hz (H7 ``CSI_VALUE``)."""
    conf_switches: dict[str, int] = field(default_factory=dict)
    """The package's own ``*_hal_conf.h`` switches (F4 ``PREFETCH_ENABLE``; H7 ``USE_FLASH_ECC``), in order."""
    power_supply: str | None = None
    """``HAL_PWREx_ConfigSupply`` argument when the PWR block needs its supply configured before voltage
    scaling (H7 ``PWR_LDO_SUPPLY``); None when it has no supply configuration."""
    rcc_domains: bool = False
    """The RCC has per-domain prescalers (D1CPRE, D1PPRE, D2PPRE1/2, D3PPRE: ``STM32H7_rcc``); False: one AHB
    prescaler and APB1/APB2 (``STM32F417-rcc``)."""
    adc_calibration: bool = False
    """The ADC is the ``aditf5`` generation: offset calibration, per-channel single-ended/differential,
    ``ADC_REGULAR_RANK_n``, ``ConversionDataManagement``; False: ``aditf2`` (numeric ranks, ``DataAlign``)."""
    adc_sampling_time: str = "84CYCLES"
    """The sampling time the lowering configures (``ADC_SAMPLETIME_<this>``; the settings differ per ADC)."""
    adc_sampling_cycles: dict[str, float] = field(default_factory=dict)
    """Every ``ADC_SAMPLETIME_<name>`` constant of the package's ``*_hal_adc.h`` → its sample-and-hold time in
    ADC clock cycles (F4 ``3CYCLES`` → 3, H7 ``1CYCLE_5`` → 1.5): what a plan's acquisition time maps onto."""
    adc_oversampling_max: int = 0
    """log2 of the largest hardware oversampling ratio ``ADC_OversamplingTypeDef.Ratio`` takes (H7 aditf5: 1..1024,
    so 10); 0: the ADC has no oversampler (F4 aditf2: no ``Oversampling`` in ``ADC_InitTypeDef``)."""
    i2c_timing_register: bool = False
    """The I2C is the ``i2c2`` generation (TIMINGR, analog filter); False: ``i2c1`` (ClockSpeed, DutyCycle)."""
    spi_fifo: bool = False
    """The SPI is the ``spi2s2`` generation (FIFO threshold, NSS pulse, keep-IO-state); False: ``spi2s1``."""
    uart_prescaler: bool = False
    """The USART has a kernel-clock prescaler, one-bit sampling and advanced features (``sci3``/``sci2_v3``)."""
    iwdg_window: bool = False
    """The IWDG has a window register (``iwdg1_v2``)."""
    rtc_output_remap: bool = False
    """``RTC_InitTypeDef`` has ``OutPutRemap`` (the H7 RTC's RTC_OUT remap, stm32h7xx_hal_rtc.h)."""
    rtos: HalRtos | None = None
    """How FreeRTOS (CMSIS-RTOS2) runs beside this HAL; None: the HAL lowering offers no RTOS here."""
