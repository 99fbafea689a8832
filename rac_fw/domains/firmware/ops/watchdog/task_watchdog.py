"""The ``task_watchdog`` operation: per-thread supervision, the hardware watchdog as its fallback."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.ops.events import attached
from rac_fw.domains.firmware.ops.events.react import feeders
from rac_fw.domains.firmware.ops.kernel import unknown_threads
from rac_fw.domains.firmware.ops.kernel.mutex_lock import MutexLock
from rac_fw.domains.firmware.ops.kernel.semaphore import Semaphore
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: The feed interval may use at most this fraction of the timeout (as for the ``watchdog`` operation).
FEED_MARGIN = 0.8

#: Zephyr's ``CONFIG_TASK_WDT_MIN_TIMEOUT`` range (subsys/task_wdt/Kconfig): 1 to 10000 ms.
MIN_TIMEOUT_RANGE_MS = (1, 10_000)

#: ``CONFIG_TASK_WDT_CHANNELS`` range (subsys/task_wdt/Kconfig): 2 to 100.
CHANNELS_RANGE = (2, 100)


def _hardware_watchdog(target: Target) -> bool:
    return has_dt_label(target, r"watchdog0", r"iwdg\d*", r"wdt\d*")


class TaskWatchdog(Operation):
    """Supervise named threads: each feeds its own channel every ``feed_interval_ms``; one that stops
    for ``timeout_ms`` makes the watchdog expire, which resets the SoC.

    The health of every thread in ``threads`` (and of every ``react`` with action feed naming this
    operation, e.g. a timer expiry proving the timer interrupt runs) gates the system: the hardware
    watchdog is fed only while all channels are. ``hardware_fallback`` uses the board's hardware
    watchdog in case the task watchdog's own timer stops (None: where the board has one). The expiry
    is published as the ``expiry`` event (interrupt context, right before the reset: reactions to it
    must run in the callback). Waits in a supervised thread count against the timeout
    (E_WATCHDOG_WINDOW); the hardware watchdog cannot also serve a ``watchdog`` operation
    (E_WATCHDOG_SHARED).
    """

    RESETS_AFTER_EVENT: ClassVar[bool] = True
    EVENT_IN_ISR: ClassVar[bool] = True

    op: Literal["task_watchdog"]
    threads: list[Name] = Field(default_factory=list, max_length=16, description="Supervised threads.")
    timeout_ms: int = Field(ge=1, le=3_600_000, description="How long a channel may go unfed.")
    feed_interval_ms: int = Field(ge=1, le=3_600_000, description="How often each supervised thread feeds.")
    hardware_fallback: bool | None = Field(
        default=None, description="Back the task watchdog with the hardware watchdog (None: where there is one)."
    )

    def fallback(self, target: Target) -> bool:
        return _hardware_watchdog(target) if self.hardware_fallback is None else self.hardware_fallback


def _waits(plan: Plan, thread: str) -> list[tuple[int, str, float]]:
    """The semaphore and mutex waits a thread makes: (operation index, timeout field, ms; inf = forever)."""
    found = []
    for i, o in enumerate(plan.operations):
        if isinstance(o, Semaphore) and o.taker == thread:
            found.append((i, "take_timeout_ms", o.take_timeout_ms))
        elif isinstance(o, MutexLock) and thread in o.threads:
            found.append((i, "lock_timeout_ms", o.lock_timeout_ms))
    return [(i, f, math.inf if t == "forever" else float(t)) for i, f, t in found]


def _check(plan: Plan, target: Target, framework: str, index: int, op: TaskWatchdog) -> list[Evidence]:

    label = op.name or f"operations[{index}]"
    base: list[str | int] = ["operations", index]
    found = unknown_threads(plan, framework, [(t, [*base, "threads", j]) for j, t in enumerate(op.threads)])
    if not op.threads and not feeders(plan, op.name):
        found.append(
            violation(
                "E_WATCHDOG_WINDOW",
                f"{label} supervises nothing: no thread and no react with action feed",
                [*base, "threads"],
                [label],
                relaxations=[
                    relax(f"supervise {t.name}", replace([*base, "threads"], [t.name]))
                    for t in plan.resources.threads[:3]
                ],
            )
        )
    budget = math.floor(op.timeout_ms * FEED_MARGIN)
    if op.feed_interval_ms > budget:
        found.append(
            violation(
                "E_WATCHDOG_WINDOW",
                f"{label} is fed every {op.feed_interval_ms} ms, more than {int(FEED_MARGIN * 100)} % of its "
                f"{op.timeout_ms} ms timeout",
                [*base, "feed_interval_ms"],
                [label],
                [measure("feed_interval", op.feed_interval_ms, "ms"), measure("limit", budget, "ms")],
                [
                    relax(f"feed every {budget} ms", replace([*base, "feed_interval_ms"], budget)),
                    relax(
                        f"time out after {math.ceil(op.feed_interval_ms / FEED_MARGIN)} ms",
                        replace([*base, "timeout_ms"], math.ceil(op.feed_interval_ms / FEED_MARGIN)),
                    ),
                ],
            )
        )
    else:
        for thread in op.threads:
            for where, field, wait in _waits(plan, thread):
                room = budget - op.feed_interval_ms
                if wait <= room:
                    continue
                name = plan.operations[where].name or f"operations[{where}]"
                path: list[str | int] = ["operations", where, field]
                options = [relax(f"wait at most {room} ms", replace(path, room))] if room >= 1 else []
                options.append(
                    relax(
                        f"stop supervising {thread}",
                        replace([*base, "threads"], [t for t in op.threads if t != thread]),
                    )
                )
                found.append(
                    violation(
                        "E_WATCHDOG_WINDOW",
                        f"{thread} is supervised by {label} but waits on {name} "
                        + ("forever" if wait == math.inf else f"up to {int(wait)} ms")
                        + f" between feeds: its channel would expire ({op.timeout_ms} ms) while it waits",
                        path,
                        [thread, name, label],
                        [measure("wait", -1 if wait == math.inf else wait, "ms"), measure("limit", room, "ms")],
                        options,
                    )
                )
    if framework == "zephyr" and op.hardware_fallback and not _hardware_watchdog(target):
        found.append(
            violation(
                "E_TARGET_UNSUPPORTED",
                f"{target.id} has no hardware watchdog node for {label}'s fallback",
                [*base, "hardware_fallback"],
                [label, target.id],
                relaxations=[relax("run without the hardware fallback", replace([*base, "hardware_fallback"], False))],
            )
        )
    elif op.fallback(target):
        for j, other in enumerate(plan.operations):
            if other.op == "watchdog":
                found.append(
                    violation(
                        "E_WATCHDOG_SHARED",
                        f"{label} uses the hardware watchdog as its fallback, and {other.name or f'operations[{j}]'} "
                        "installs it too",
                        [*base, "hardware_fallback"],
                        [label, other.name or f"operations[{j}]"],
                        relaxations=[
                            relax(
                                "run the task watchdog without the hardware fallback",
                                replace([*base, "hardware_fallback"], False),
                            ),
                            relax(f"drop {other.name or f'operations[{j}]'}", remove(["operations", j])),
                        ],
                    )
                )
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: TaskWatchdog) -> dict[str, Any]:
    b.app.includes.update({"zephyr/task_wdt/task_wdt.h", "zephyr/sys/reboot.h", "zephyr/sys/atomic.h"})
    fallback = op.fallback(b.target)
    feeding = feeders(b.plan, op.name)
    channels = len(op.threads) + len(feeding)
    b.app.need("watchdog", "CONFIG_TASK_WDT", "CONFIG_REBOOT")
    b.app.setting("watchdog", "CONFIG_TASK_WDT_CHANNELS", str(max(CHANNELS_RANGE[0], min(channels, CHANNELS_RANGE[1]))))
    if fallback:
        b.app.need("watchdog", "CONFIG_WATCHDOG", "CONFIG_TASK_WDT_HW_FALLBACK")
        low, high = MIN_TIMEOUT_RANGE_MS
        b.app.setting("watchdog", "CONFIG_TASK_WDT_MIN_TIMEOUT", str(max(low, min(op.timeout_ms, high))))
    view: dict[str, Any] = {
        "id": b.ids[index],
        "node": b.watchdog_node() if fallback else None,
        "timeout_ms": op.timeout_ms,
        "interval_ms": op.feed_interval_ms,
        "channels": channels,
        "threads": len(op.threads),
        "reactions": attached(b, index),
        "setup": True,
    }
    b.name_view(view, index)
    view["thread_parts"] = [
        (t, b.thread_part("task_watchdog", "task_watchdog", {**view, "slot": len(feeding) + j}))
        for j, t in enumerate(op.threads)
    ]
    return view


SPEC = OpSpec(
    model=TaskWatchdog,
    family="watchdog",
    flags=frozenset({Flag.VALUE}),
    events=("expiry",),
    realizations={"zephyr": Realization(template="task_watchdog", view=_zephyr)},
    checks=(_check,),
    codes=("E_WATCHDOG_WINDOW", "E_WATCHDOG_SHARED", "E_TARGET_UNSUPPORTED", "E_UNKNOWN_RESOURCE"),
)
