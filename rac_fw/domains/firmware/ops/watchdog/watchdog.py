"""The ``watchdog`` operation: its model and its spec."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import has_dt_label, watchdog_instance
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class Watchdog(Operation):
    """Install the hardware watchdog with ``timeout_ms`` and feed it every ``feed_interval_ms``.

    The feed interval must leave margin below the timeout (≤ 80 %, E_WATCHDOG_WINDOW) and the timeout
    must be reachable by the watchdog's clock and prescalers (E_WATCHDOG_RANGE).
    """

    op: Literal["watchdog"]
    timeout_ms: int = Field(ge=1, le=3_600_000, description="Time without a feed before reset.")
    feed_interval_ms: int = Field(ge=1, le=3_600_000, description="How often the feeding thread feeds.")
    reset_behaviour: Literal["reset_soc", "reset_cpu"] = Field(
        default="reset_soc", description="What expiry resets: the whole SoC or the CPU core only."
    )
    feed_thread: Name | None = Field(
        default=None, description="Thread (resources.threads) that feeds; None = the main thread."
    )


def _zephyr(b: ZephyrBuilder, index: int, op: Watchdog) -> dict[str, Any]:
    b.app.includes.add("zephyr/drivers/watchdog.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "node": b.watchdog_node(),
        "timeout_ms": op.timeout_ms,
        "interval_ms": op.feed_interval_ms,
        "flag": "WDT_FLAG_RESET_SOC" if op.reset_behaviour == "reset_soc" else "WDT_FLAG_RESET_CPU_CORE",
    }
    if op.feed_thread is None:
        view.update(setup=True, step={"period_ms": op.feed_interval_ms})
    else:
        view["thread_parts"] = [(op.feed_thread, b.thread_part("watchdog", "watchdog", view, feeds=True))]
    return view


def _espidf(b: EspIdfBuild, index: int, op: Watchdog) -> dict[str, Any]:
    facts = b.target.watchdogs.get("TASK_WDT")
    high = int(facts.max_timeout_ms if facts is not None and facts.max_timeout_ms is not None else 60_000)
    low = int(facts.min_timeout_ms if facts is not None and facts.min_timeout_ms is not None else 1000)
    seconds = min(max(math.ceil(op.timeout_ms / 1000), low // 1000), high // 1000)
    b.sdkconfig.update({
        "CONFIG_ESP_TASK_WDT_EN": "y", "CONFIG_ESP_TASK_WDT_INIT": "y", "CONFIG_ESP_TASK_WDT_PANIC": "y",
        "CONFIG_ESP_TASK_WDT_TIMEOUT_S": str(seconds), "CONFIG_ESP_SYSTEM_PANIC_PRINT_REBOOT": "y",
    })  # fmt: skip
    return {"task": b.thread(op.feed_thread, op.feed_thread or b.symbol(index, op))}


def _hal(b: HalBuild, index: int, op: Watchdog) -> dict[str, Any]:
    if op.feed_thread is not None:
        # The HAL application feeds from its loop (rac_loop under FreeRTOS); a named feeder would be ignored.
        raise b.unsupported(f"operations[{index}].feed_thread", "the STM32 HAL lowering feeds the watchdog "
                            f"from its main loop, not from thread {op.feed_thread!r}: drop feed_thread")  # fmt: skip
    view = b.base_view(index, op)
    view["iwdg"] = b.watchdog = b.iwdg(op.timeout_ms, f"operations[{index}]")
    b.modules.add("IWDG")
    return view


def _baremetal(b: BaremetalBuild, index: int, op: Watchdog) -> None:
    target = b.target
    found = b.watchdog_instance()
    if found is None:
        raise b.error(f"{target.id}: no independent watchdog in the facts")
    instance, facts = found
    regs = b.regs(instance)
    if regs.has("KR", "PR", "RLR"):
        kind, setting = "iwdg", b.derive.iwdg(op.timeout_ms, facts)
    elif regs.has("CRV", "RREN"):
        kind, setting = "nrf_wdt", b.derive.nrf_wdt(op.timeout_ms, facts)
    else:
        raise b.error(f"{instance}: no watchdog register layout the baremetal templates know")
    ctx = b.base(index, op) | {
        "inst": instance,
        "m": regs.m,
        "kind": kind,
        "setting": setting,
        "clock_hz": facts.clock_hz,
        "feed_ms": op.feed_interval_ms,
        "budget": b.budget_us(b.PERIPHERAL_TIMEOUT_US),
    }
    b.emit("ops/watchdog", ctx)


def _has_independent_watchdog(target: Target) -> bool:
    """The bare-metal template programs an independent watchdog the facts describe (IWDG, nRF WDT)."""
    return watchdog_instance(target) is not None


SPEC = OpSpec(
    model=Watchdog,
    family="watchdog",
    needs="watchdog",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(
            template="watchdog", view=_zephyr, available=lambda t: has_dt_label(t, r"watchdog0", r"iwdg\d*", r"wdt\d*")
        ),
        "espidf": Realization(template="watchdog", view=_espidf),
        "hal": Realization(template="ops", view=_hal),
        "baremetal": Realization(
            template="ops/watchdog", view=_baremetal, available=lambda t: watchdog_instance(t) is not None
        ),
    },
)
