"""The ``stack_report`` operation: print every thread's stack usage once (Zephyr's thread analyzer).

``THREAD_ANALYZER`` depends on ``!ARCH_POSIX`` (subsys/debug/Kconfig): a host-process target
(native_sim) cannot have it, so the realization is unavailable there and the support obligation says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class StackReport(Operation):
    """Print each thread's stack size and high-water mark once (Zephyr's thread analyzer).

    The report runs with the one-shot operations, after every setup: the plan's threads have started.
    """

    op: Literal["stack_report"]


def _not_hosted(target: Target) -> bool:
    """The application runs on the chip rather than as a host process (the core facts call that core ``host``)."""
    return target.core.name != "host"


def _zephyr(b: ZephyrBuilder, index: int, op: StackReport) -> dict[str, Any]:
    b.app.includes.add("zephyr/debug/thread_analyzer.h")
    # subsys/debug/Kconfig: THREAD_ANALYZER (selects INIT_STACKS, THREAD_STACK_INFO), printk output by default;
    # THREAD_NAME lets the report name the threads.
    b.app.need("memory", "CONFIG_THREAD_ANALYZER", "CONFIG_THREAD_ANALYZER_USE_PRINTK", "CONFIG_THREAD_NAME")
    return {"step": {"period_ms": None}}


SPEC = OpSpec(
    model=StackReport,
    family="memory",
    realizations={"zephyr": Realization(template="memory", view=_zephyr, available=_not_hosted)},
)
