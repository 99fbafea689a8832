"""Power states of a chip, what can wake it from each, and what each keeps powered (RAM retention).

These are the facts the power obligations judge a plan by: a wake source is only useful if it can end
the state the plan enters (an nRF52 RTC cannot wake System OFF: the RTC is off), and a plan that
continues with its RAM after waking must not pick a state whose wake is a reset (STM32 Standby, ESP32
deep sleep, nRF52 System OFF). How each framework enters a state is a fact of that framework's SoC
support (``enter``), so no lowering branches on a chip.

The data is the ``power:`` table of each chip pack (``targets/chips/<chip>/chip.yaml``), with the
manual cited per state, validated into ``Target.power`` when the pack loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict, with_config

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

_STRICT = ConfigDict(extra="forbid")

WakeKind = Literal["gpio", "rtc", "timer", "uart"]
"""``gpio``: a pin level or edge; ``rtc``: the low-power real-time clock's wake-up timer (runs from the
32 kHz domain); ``timer``: a high-speed timer or the CPU's SysTick (stops with the main clocks);
``uart``: activity on a UART receive line."""

Mechanism = Literal["idle", "pm", "poweroff", "light_sleep", "deep_sleep", "stop", "standby"]
"""How a framework enters a state: ``idle`` — the scheduler's idle loop (WFI/WFE) while the thread waits;
``pm`` — Zephyr's PM policy picks the state during idle (``CONFIG_PM``); for ``baremetal`` and ``hal``, ``idle``
is a WFI loop in Sleep mode (SLEEPDEEP clear; HAL_PWR_EnterSLEEPMode), woken by the 1 kHz SysTick; ``poweroff`` — Zephyr
``sys_poweroff()``; ``light_sleep``/``deep_sleep`` — ESP-IDF ``esp_light_sleep_start``/``esp_deep_sleep_start``;
``stop``/``standby`` — STM32Cube HAL ``HAL_PWR_EnterSTOPMode``/``HAL_PWR_EnterSTANDBYMode``."""


@with_config(_STRICT)
@dataclass(frozen=True)
class WakeSource:
    """Something that can end a power state."""

    kind: WakeKind
    pins: tuple[str, ...] = ()
    """For ``gpio``: the only pins that can wake (STM32 WKUP pins in WKUP order, WKUP1 first; ESP32 RTC
    IOs); empty = any GPIO."""
    note: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class PowerState:
    """One low-power state as the reference manual names it."""

    name: str
    """The chip's own name, lower-case: ``stop``, ``standby``, ``system_off``, ``light_sleep``…"""
    description: str
    wake: tuple[WakeSource, ...]
    ram_retained: bool
    """True when SRAM keeps its contents and execution continues after the wake-up."""
    wake_resets: bool
    """True when a wake-up restarts the chip from its reset vector (the application starts again)."""
    retained: tuple[str, ...] = ()
    """Memories kept even though SRAM is lost (backup SRAM, RTC memory, backup registers)."""
    zephyr_state: str | None = None
    """Zephyr's ``enum pm_state`` name for it (``suspend-to-idle``, ``soft-off``), None when Zephyr has none."""
    enter: dict[str, Mechanism] = field(default_factory=dict)
    """Framework → how that framework's support for this SoC enters the state; absent = it cannot."""
    source: str = ""

    def wakes(self, kind: str) -> WakeSource | None:
        return next((w for w in self.wake if w.kind == kind), None)


@with_config(_STRICT)
@dataclass(frozen=True)
class PowerFacts:
    """Every power state of the chip, shallowest first."""

    states: tuple[PowerState, ...]
    source: str

    def state(self, name: str) -> PowerState | None:
        return next((s for s in self.states if s.name == name), None)

    def for_framework(self, framework: str) -> list[PowerState]:
        """The states ``framework`` can enter on this chip."""
        return [s for s in self.states if framework in s.enter]

    def waking(self, kind: str, framework: str) -> list[PowerState]:
        """The states ``framework`` enters that a wake source of ``kind`` can end."""
        return [s for s in self.for_framework(framework) if s.wakes(kind)]


def power(target: Target) -> PowerFacts | None:
    """The power facts of ``target`` (None when its chip pack has none)."""
    return target.power
