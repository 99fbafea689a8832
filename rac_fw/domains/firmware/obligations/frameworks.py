"""What each lowering framework offers, as data: threads, timers, devicetree, stack floors.

These are facts about the *software* (Zephyr 4.x, ESP-IDF 5.x, STM32Cube HAL, rac-fw's bare-metal
runtime), not about a chip; chip facts come from the target pack. Obligations ask this table instead
of testing framework names in their logic. Which *operations* a framework realizes is not here: each
op spec declares its realizations and ``ops.matrix`` answers from them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FrameworkRules:
    """The capabilities and limits of one lowering framework."""

    name: str
    threads: bool
    """An RTOS scheduler exists (threads, queues, mutexes)."""
    kernel_timer: bool
    """``source: kernel`` is realized: a kernel timer (Zephyr k_timer), or a timer the lowering picks
    itself (ESP-IDF gptimer, HAL basic timer)."""
    owns_systick: bool
    """The framework uses the Cortex-M SysTick itself, so a plan cannot claim it."""
    hardware_timers: bool
    """Timer operations may name a hardware timer instance (``source: TIM2``)."""
    devicetree: bool
    """Channels and devices can be named by devicetree path/label."""
    min_thread_stack_bytes: int
    """Smallest stack that survives the framework's own calls (logging, printf) in a thread."""
    ram_overhead_bytes: int
    """Static RAM the framework itself uses in a minimal build (kernel objects, idle/ISR stacks)."""
    min_kernel_timer_us: int = 1
    """Shortest period the kernel timer service accepts (esp_timer: 50 µs for periodic timers)."""
    systick_tick_us: int | None = None
    """When the plan may claim SysTick: the time base it runs at; periods are whole multiples of it."""


FRAMEWORKS: dict[str, FrameworkRules] = {
    "zephyr": FrameworkRules(
        name="zephyr",
        threads=True,
        kernel_timer=True,
        owns_systick=True,
        hardware_timers=False,
        devicetree=True,
        min_thread_stack_bytes=512,
        ram_overhead_bytes=8 * 1024,
    ),
    "espidf": FrameworkRules(
        name="espidf",
        threads=True,
        kernel_timer=True,
        owns_systick=True,
        hardware_timers=True,
        devicetree=False,
        min_thread_stack_bytes=2048,
        ram_overhead_bytes=96 * 1024,
        min_kernel_timer_us=50,
    ),
    "hal": FrameworkRules(
        name="hal",
        # FreeRTOS through CMSIS-RTOS2 when an operation needs kernel threads (lower/hal.py; the thread and
        # kernel operations are available where the chip facts say how, facts.query.hal_rtos).
        threads=True,
        kernel_timer=True,
        owns_systick=True,
        hardware_timers=True,
        devicetree=False,
        min_thread_stack_bytes=512,
        ram_overhead_bytes=1024,
    ),
    "baremetal": FrameworkRules(
        name="baremetal",
        threads=False,
        kernel_timer=False,
        owns_systick=False,
        hardware_timers=True,
        devicetree=False,
        min_thread_stack_bytes=0,
        ram_overhead_bytes=512,
        systick_tick_us=1000,
    ),
}

#: Extra RAM the Wi-Fi stack needs while a ``wifi_station`` runs (ESP-IDF static + dynamic buffers).
WIFI_RAM_BYTES = 64 * 1024
#: Smallest main stack (``plan.stack_bytes``) any framework runs with.
MIN_MAIN_STACK_BYTES = 512
