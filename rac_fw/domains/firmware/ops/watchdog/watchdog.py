"""The ``watchdog`` operation: its model and its spec."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import WatchdogRange, has_dt_label, watchdog_instance, watchdog_range
from rac_fw.domains.firmware.ops.handoff.isr_handoff import IsrHandoff
from rac_fw.domains.firmware.ops.threads.lock_order import LockOrder
from rac_fw.domains.firmware.ops.threads.producer_consumer import ProducerConsumer
from rac_fw.domains.firmware.ops.threads.shared_state_mutex import SharedStateMutex
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Action, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class Watchdog(Operation):
    """Install the hardware watchdog with ``timeout_ms`` and feed it every ``feed_interval_ms``.

    The feed interval must leave margin below the timeout (≤ 80 %, E_WATCHDOG_WINDOW) and the timeout
    must be reachable by the watchdog's clock and prescalers (E_WATCHDOG_RANGE).

    The expiry always resets the whole SoC: Zephyr's nRF driver refuses any other ``wdt_timeout_cfg``
    flag (``wdt_nrfx.c``: -ENOTSUP unless WDT_FLAG_RESET_SOC), the STM32 IWDG can only reset the system
    (RM0090 §21.3, RM0433 §45.4), and ESP-IDF's task watchdog panics into a chip reset, so a CPU-only
    reset is not offered.
    """

    op: Literal["watchdog"]
    timeout_ms: int = Field(ge=1, le=3_600_000, description="Time without a feed before reset.")
    feed_interval_ms: int = Field(ge=1, le=3_600_000, description="How often the feeding thread feeds.")
    reset_behaviour: Literal["reset_soc"] = Field(
        default="reset_soc",
        description="What expiry resets: the whole SoC, the one behaviour every watchdog in the packs has.",
    )
    feed_thread: Name | None = Field(
        default=None, description="Thread (resources.threads) that feeds; None = the main thread."
    )
    report_expiry: Literal["reset_cause", "channel"] | None = Field(
        default=None,
        description="Early on every boot, print whether the previous reset was this watchdog's expiry "
        "('rac: <name> expired before this boot' / '... no expiry before this boot'). reset_cause: from the "
        "chip's reset cause; channel: also from a RAM word the expiry callback writes (Zephyr, where the "
        "driver runs one and the chip keeps RAM across the reset, E_WATCHDOG_CALLBACK).",
    )


def _zephyr(b: ZephyrBuilder, index: int, op: Watchdog) -> dict[str, Any]:
    b.app.includes.add("zephyr/drivers/watchdog.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "node": b.watchdog_node(),
        "timeout_ms": op.timeout_ms,
        "interval_ms": op.feed_interval_ms,
        "flag": "WDT_FLAG_RESET_SOC",
        "report": op.report_expiry,
    }
    if op.report_expiry is not None:
        # hwinfo: the reset cause names a watchdog reset (RESET_WATCHDOG); the boot report runs in main.
        b.app.need("watchdog", "CONFIG_HWINFO")
        b.app.includes.add("zephyr/drivers/hwinfo.h")
        view["setup"] = True
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
    return {"task": b.thread(op.feed_thread, op.feed_thread or b.symbol(index, op)), "report": op.report_expiry}


def _hal(b: HalBuild, index: int, op: Watchdog) -> dict[str, Any]:
    if op.feed_thread is not None:
        # The HAL application feeds from its loop (rac_loop under FreeRTOS); a named feeder would be ignored.
        raise b.unsupported(f"operations[{index}].feed_thread", "the STM32 HAL lowering feeds the watchdog "
                            f"from its main loop, not from thread {op.feed_thread!r}: drop feed_thread")  # fmt: skip
    view = b.base_view(index, op)
    view["iwdg"] = b.watchdog = b.iwdg(op.timeout_ms, f"operations[{index}]")
    view["outputs"] = {}
    b.modules.add("IWDG")
    if op.report_expiry is not None:
        # The RCC reset flag of this IWDG instance (stm32f4xx_hal_rcc.h RCC_FLAG_IWDGRST,
        # stm32h7xx_hal_rcc.h RCC_FLAG_IWDG1RST): RCC_FLAG_<instance>RST.
        view["reset_flag"] = f"RCC_FLAG_{view['iwdg']['instance']}RST"
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
        "report": _reset_flag(b, instance) if op.report_expiry is not None else None,
    }
    b.emit("ops/watchdog", ctx)


def _reset_flag(b: BaremetalBuild, instance: str) -> dict[str, str]:
    """Where the SVD facts keep the "this watchdog reset the chip" flag and how it is cleared.

    STM32: an RCC register with RMVF (write 1: clear every reset flag) and the watchdog's flag, named
    ``<instance><n>RSTF`` (H7 RSR.IWDG1RSTF for the SVD's IWDG) or, in the F4 SVD, ``WDGRSTF`` (RM0090
    RCC_CSR calls it IWDGRSTF). nRF: POWER.RESETREAS.DOG (write 1 to clear; nRF52840 PS, RESETREAS)."""
    for owner in ("RCC", "POWER"):
        if owner not in b.target.peripherals:
            continue
        regs = b.regs(owner)
        for reg, fields in regs.regs.items():
            if owner == "POWER" and "DOG" in fields:
                mask = regs.m(reg, "DOG")
                return {"reg": f"{owner}->{reg}", "flag": mask, "clear_mask": mask, "w1c": "yes"}
            if "RMVF" not in fields:
                continue
            own = re.compile(rf"^{re.escape(instance)}\d*RSTF$")
            name = next((f for f in fields if own.match(f)), "WDGRSTF" if "WDGRSTF" in fields else None)
            if name is not None:
                flag, clear = regs.m(reg, name), regs.m(reg, "RMVF")
                return {"reg": f"{owner}->{reg}", "flag": flag, "clear_mask": clear, "w1c": ""}
    raise b.error(f"{b.target.id}: no reset flag for {instance} in the SVD facts (RCC ...RSTF or POWER.RESETREAS.DOG)")


def _has_independent_watchdog(target: Target) -> bool:
    """The bare-metal template programs an independent watchdog the facts describe (IWDG, nRF WDT)."""
    return watchdog_instance(target) is not None


# --- obligations --------------------------------------------------------------------------------------
# E_WATCHDOG_RANGE: the timeout must be one the watchdog's clock, prescalers and reload counter can
# produce (STM32 IWDG: 0.125 ms to 32.8 s on the 32 kHz LSI; ESP-IDF task watchdog: 1-60 s).
# E_WATCHDOG_WINDOW: the feed interval must leave margin below the timeout (≤ 80 % of it) so scheduling
# jitter never lets the watchdog fire in normal operation, and the feeding thread must not also block on
# a queue, semaphore or lock (its waits would delay the feed without bound).
# E_WATCHDOG_SHARED: a watchdog whose channels share one reload value (fact ``shared_reload``: the
# nRF52840 WDT's single CRV behind its 8 reload-request channels, an IWDG's single RLR, the ESP-IDF task
# watchdog's one timeout) cannot time out differently for two watchdog operations; the relaxation gives
# every one the shortest timeout (feeding faster where that timeout needs it).
#: The feed interval may use at most this fraction of the timeout.
FEED_MARGIN = 0.8


def _waits_in(plan: Plan, thread: str) -> list[str]:
    """Operations that make ``thread`` block (receive a handoff, consume/produce a queue, take locks)."""
    found = []
    for i, op in enumerate(plan.operations):
        if (
            (isinstance(op, IsrHandoff) and op.thread == thread)
            or (isinstance(op, ProducerConsumer) and thread in (op.producer, op.consumer))
            or (isinstance(op, SharedStateMutex | LockOrder) and thread in op.threads)
        ):
            found.append(op.name or f"operations[{i}]")
    return found


def _shared_reload(plan: Plan, target: Target, limits: WatchdogRange | None) -> list[Evidence]:
    """Watchdog operations asking one shared-reload watchdog for different timeouts."""
    entry = target.watchdogs.get(limits.name) if limits is not None else None
    if limits is None or entry is None or not entry.shared_reload:
        return []
    ops = [(i, op) for i, op in enumerate(plan.operations) if isinstance(op, Watchdog)]
    timeouts = sorted({op.timeout_ms for _, op in ops})
    if len(timeouts) < 2:
        return []
    first_index, first = ops[0]
    index, other = next((i, op) for i, op in ops if op.timeout_ms != first.timeout_ms)
    common = timeouts[0]
    steps = [replace(["operations", i, "timeout_ms"], common) for i, op in ops if op.timeout_ms != common]
    steps += [
        replace(["operations", i, "feed_interval_ms"], max(1, common // 2))
        for i, op in ops
        if op.feed_interval_ms > common * FEED_MARGIN
    ]
    return [
        violation(
            "E_WATCHDOG_SHARED",
            f"{limits.name} has one reload value for all its channels: operations[{first_index}] asks "
            f"{first.timeout_ms} ms and operations[{index}] {other.timeout_ms} ms",
            ["operations", index, "timeout_ms"],
            [limits.name, first.name or f"operations[{first_index}]", other.name or f"operations[{index}]"],
            [measure("timeout", first.timeout_ms, "ms"), measure("other_timeout", other.timeout_ms, "ms")],
            [relax(f"use one {common} ms timeout for every watchdog operation", *steps)],
        )
    ]


def _timing(plan: Plan, target: Target, framework: str, index: int, op: Watchdog) -> list[Evidence]:
    """The timeout against the hardware range, the feed window and the feeding thread's liveness; the
    first watchdog operation also answers for a shared reload value the others ask differently of."""
    limits = watchdog_range(target, framework)
    first = next(i for i, other in enumerate(plan.operations) if isinstance(other, Watchdog))
    found = _shared_reload(plan, target, limits) if index == first else []
    base: Path = ["operations", index]
    timeout = op.timeout_ms
    if limits is not None and not limits.min_ms <= timeout <= limits.max_ms:
        timeout = max(math.ceil(limits.min_ms), min(timeout, math.floor(limits.max_ms)))
        steps = [replace([*base, "timeout_ms"], timeout)]
        if op.feed_interval_ms > timeout * FEED_MARGIN:
            steps.append(replace([*base, "feed_interval_ms"], max(1, timeout // 2)))
        found.append(
            violation(
                "E_WATCHDOG_RANGE",
                f"{limits.name} cannot time out after {op.timeout_ms} ms: its range is "
                f"{limits.min_ms:g}-{limits.max_ms:g} ms",
                [*base, "timeout_ms"],
                [limits.name],
                [
                    measure("timeout", op.timeout_ms, "ms"),
                    measure("min", limits.min_ms, "ms"),
                    measure("max", limits.max_ms, "ms"),
                ],
                [relax(f"use a {timeout} ms timeout", *steps)],
            )
        )
        return found
    waits = _waits_in(plan, op.feed_thread) if op.feed_thread else []
    if waits:
        path: Path = [*base, "feed_thread"]
        found.append(
            violation(
                "E_WATCHDOG_WINDOW",
                f"thread {op.feed_thread} feeds the watchdog but also blocks in "
                f"{', '.join(waits)}: a long wait there would starve the feed",
                path,
                [op.feed_thread or "", *waits],
                relaxations=[relax("feed from a thread of its own (the main thread)", remove(path))],
            )
        )
    if op.feed_interval_ms > op.timeout_ms * FEED_MARGIN:
        path = [*base, "feed_interval_ms"]
        feed = max(1, op.timeout_ms // 2)
        found.append(
            violation(
                "E_WATCHDOG_WINDOW",
                f"feeding every {op.feed_interval_ms} ms leaves no margin below the "
                f"{op.timeout_ms} ms timeout (at most {FEED_MARGIN:.0%} of it)",
                path,
                [op.name or op.op, op.feed_thread or "main"],
                [
                    measure("feed_interval", op.feed_interval_ms, "ms"),
                    measure("timeout", op.timeout_ms, "ms"),
                    measure("margin", op.timeout_ms - op.feed_interval_ms, "ms"),
                ],
                [
                    relax(f"feed every {feed} ms", replace(path, feed)),
                    relax(
                        f"lengthen the timeout to {math.ceil(op.feed_interval_ms / 0.5)} ms",
                        replace([*base, "timeout_ms"], math.ceil(op.feed_interval_ms / 0.5)),
                    ),
                ],
            )
        )
    return found


# E_WATCHDOG_CALLBACK: ``report_expiry: channel`` records the expired channel from the expiry callback in a
# ``__noinit`` word the next boot reads. That needs a driver that runs ``wdt_timeout_cfg.callback`` from an
# expiry interrupt (chip fact ``expiry_callback``: Zephyr's nRF WDT driver does, STM32 IWDG's refuses it
# with -ENOTSUP) and RAM that survives the watchdog reset (``ram_retained_on_reset``); only the Zephyr
# realization installs a callback. The relaxation reports the reset cause alone.
CALLBACK = "E_WATCHDOG_CALLBACK"


def _callback(plan: Plan, target: Target, framework: str, index: int, op: Watchdog) -> list[Evidence]:
    """E_WATCHDOG_CALLBACK: a channel record the target's watchdog cannot write or keep across its reset."""
    if op.report_expiry != "channel":
        return []
    limits = watchdog_range(target, framework)
    name = limits.name if limits is not None else target.id
    entry = target.watchdogs.get(name)
    missing = [
        fact
        for fact, value in (
            ("expiry_callback", entry.expiry_callback if entry is not None else None),
            ("ram_retained_on_reset", entry.ram_retained_on_reset if entry is not None else None),
        )
        if not value
    ]
    if framework == "zephyr" and not missing:
        return []
    why = (
        f"the {framework} realization installs no expiry callback"
        if framework != "zephyr"
        else f"the {name} facts lack {' and '.join(missing)} (an expiry interrupt whose callback "
        "runs before the reset, RAM kept across it)"
    )
    path: Path = ["operations", index, "report_expiry"]
    return [
        violation(
            CALLBACK,
            f"{op.name or f'operations[{index}]'} asks report_expiry: channel, but {why}",
            path,
            [op.name or op.op, name, *(missing if framework == "zephyr" else [framework])],
            [measure("timeout", op.timeout_ms, "ms")],
            [relax("report only the reset cause on the next boot", replace(path, "reset_cause"))],
        )
    ]


def _names(plan: Plan, target: Target, framework: str, index: int, op: Watchdog) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: a ``feed_thread`` is a declared thread."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    if op.feed_thread is not None:
        refs.thread(op.feed_thread, [*base, "feed_thread"])
    return refs.found


def _console(op: Watchdog) -> list[str]:
    """The reset-cause report precedes the settings line (``report_expiry``)."""
    return [r"^rac: {label} (expired|no expiry) before this boot$"] if op.report_expiry is not None else []


#: A behaviour may feed it itself (a phased demo that stops feeding to show the reset); the driver may refuse.
#: On ESP-IDF the Task Watchdog restarts its timeout only once every subscriber has fed, so a behaviour that feeds
#: is a subscriber of its own (``esp_task_wdt_add_user``): from then on it must feed within ``timeout_ms``.
ACTIONS = {"feed": Action("Feed the watchdog now (restart its timeout).", fails=True)}


SPEC = OpSpec(
    console_lines=_console,
    actions=ACTIONS,
    model=Watchdog,
    family="watchdog",
    needs="watchdog",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(
            template="watchdog", view=_zephyr, available=lambda t: has_dt_label(t, r"watchdog0", r"iwdg\d*", r"wdt\d*"),
            quiet=lambda op: op.report_expiry is None, behaviour=frozenset({"action:feed"}),
        ),
        "espidf": Realization(template="watchdog", view=_espidf, quiet=lambda op: op.report_expiry is None,
                              behaviour=frozenset({"action:feed"})),
        "hal": Realization(template="ops", view=_hal, quiet=True, behaviour=frozenset({"action:feed"})),
        "baremetal": Realization(
            template="ops/watchdog", view=_baremetal, available=lambda t: watchdog_instance(t) is not None
        ),
    },
    checks=(_timing, _names, _callback),
    codes=("E_WATCHDOG_RANGE", "E_WATCHDOG_WINDOW", "E_WATCHDOG_SHARED", "E_UNKNOWN_RESOURCE", CALLBACK),
)
