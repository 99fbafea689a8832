"""Watchdog obligations.

E_WATCHDOG_RANGE: the timeout must be one the watchdog's clock, prescalers and reload counter can
produce (STM32 IWDG: 0.125 ms to 32.8 s on the 32 kHz LSI; ESP-IDF task watchdog: 1-60 s).
E_WATCHDOG_WINDOW: the feed interval must leave margin below the timeout (≤ 80 % of it) so
scheduling jitter never lets the watchdog fire in normal operation, and the feeding thread must not
also block on a queue, semaphore or lock (its waits would delay the feed without bound).
E_WATCHDOG_SHARED: a watchdog whose channels share one reload value (fact ``shared_reload``: the
nRF52840 WDT's single CRV behind its 8 reload-request channels, an IWDG's single RLR, the ESP-IDF
task watchdog's one timeout) cannot time out differently for two watchdog operations; the relaxation
gives every one the shortest timeout (feeding faster where that timeout needs it).
"""

from __future__ import annotations

import math

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import WatchdogRange, watchdog_range
from rac_fw.domains.firmware.obligations.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.ops.handoff.isr_handoff import IsrHandoff
from rac_fw.domains.firmware.ops.threads.lock_order import LockOrder
from rac_fw.domains.firmware.ops.threads.producer_consumer import ProducerConsumer
from rac_fw.domains.firmware.ops.threads.shared_state_mutex import SharedStateMutex
from rac_fw.domains.firmware.ops.watchdog.watchdog import Watchdog
from rac_fw.domains.firmware.plan.model import Plan

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


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Each watchdog op against the hardware range and the feed window; shared reload values."""
    limits = watchdog_range(target, framework)
    found = _shared_reload(plan, target, limits)
    for i, op in enumerate(plan.operations):
        if not isinstance(op, Watchdog):
            continue
        base: Path = ["operations", i]
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
            continue
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
