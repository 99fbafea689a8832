"""The ``watchdog`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label, watchdog_instance
from rac_fw.domains.firmware.ops.spec import OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


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


SPEC = OpSpec(
    model=Watchdog,
    family="watchdog",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(
            template="watchdog", available=lambda t: has_dt_label(t, r"watchdog0", r"iwdg\d*", r"wdt\d*")
        ),
        "espidf": Realization(template="watchdog"),
        "hal": Realization(template="ops"),
        "baremetal": Realization(template="ops/watchdog", available=lambda t: watchdog_instance(t) is not None),
    },
)
