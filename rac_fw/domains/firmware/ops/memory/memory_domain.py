"""The ``memory_domain`` operation: a user-mode thread confined to one app-memory partition.

Zephyr (include/zephyr/app_memory/app_memdomain.h: K_APPMEM_PARTITION_DEFINE, K_APP_BMEM;
include/zephyr/app_memory/mem_domain.h @1335aa16c52e: k_mem_domain_init, k_mem_domain_add_thread, both
returning a negative errno on failure; include/zephyr/kernel.h: k_thread_create with K_USER and a
K_FOREVER delay, k_thread_start once the thread is in its domain). The user thread may write only its
partition (and its own stack): its counter — this operation's value — lives there, a supervisor thread
reads it.

Obligations of its own: user mode is the ``config:`` block's (``config.user_mode``, which owns
CONFIG_USERSPACE and its conflicts; E_USER_MODE_OFF offers to switch it on), and the partition and the
user stack follow the MPU's region rules from ``facts/mpu.py`` (E_MPU_REGION: on PMSAv7 a region is a
power of two of at least 32 bytes aligned to its size, so a 3000-byte partition takes a 4096-byte region;
the relaxation states the region size, which wastes nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.mpu import mpu_regions
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import add, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

REGION = "E_MPU_REGION"
USER_MODE = "E_USER_MODE_OFF"


class MemoryDomain(Operation):
    """Run a user-mode thread whose memory domain holds one partition of ``partition_bytes``; it counts in
    its partition every ``period_ms`` (the value, read by the supervisor).

    Needs ``config.user_mode``. ``partition_bytes`` and ``stack_bytes`` are MPU regions: on Cortex-M3/M4/M7
    (PMSAv7) each must be a power of two of at least 32 bytes (E_MPU_REGION otherwise).
    """

    op: Literal["memory_domain"]
    partition_bytes: int = Field(ge=4, le=1 << 20, description="Bytes of the thread's app-memory partition.")
    stack_bytes: int = Field(default=1024, ge=256, le=1 << 16, description="The user thread's stack, bytes.")
    priority: int = Field(default=7, ge=0, le=14, description="The user thread's (preemptible) priority.")
    period_ms: int = Field(default=100, ge=1, le=3_600_000, description="How often the user thread counts.")


def _check(plan: Plan, target: Target, framework: str, index: int, op: MemoryDomain) -> list[Evidence]:
    base: list[str | int] = ["operations", index]
    label = op.name or f"operations[{index}]"
    found: list[Evidence] = []
    if plan.config is None or not plan.config.user_mode:
        patch = (
            replace(["config", "user_mode"], True) if plan.config is not None else add(["config"], {"user_mode": True})
        )
        found.append(
            violation(
                USER_MODE,
                f"{label} runs a user-mode thread, but the plan's config does not enable user mode",
                ["config", "user_mode"] if plan.config is not None else ["config"],
                [label, "config.user_mode"],
                relaxations=[relax("enable user mode (config.user_mode: true)", patch)],
            )
        )
    regions = mpu_regions(target)
    if regions is None:
        return found
    for field in ("partition_bytes", "stack_bytes"):
        wanted = getattr(op, field)
        region = regions.region_bytes(wanted)
        if region == wanted:
            continue
        options = [relax(f"use {region} bytes (the region it takes)", replace([*base, field], region))]
        if region // 2 >= max(regions.min_region_bytes, 256 if field == "stack_bytes" else 4):
            options.append(relax(f"use {region // 2} bytes", replace([*base, field], region // 2)))
        found.append(
            violation(
                REGION,
                f"{label}'s {field.replace('_', ' ')} {wanted} is no {regions.architecture} MPU region: a region is a "
                f"power of two of at least {regions.min_region_bytes} bytes aligned to its size, so it takes {region}"
                f" ({region - wanted} bytes unusable)",
                [*base, field],
                [label, field, target.core.name],
                [measure(field.removesuffix("_bytes"), wanted, "bytes"), measure("region", region, "bytes")],
                options,
            )
        )
    return found


def _storage(op: MemoryDomain) -> tuple[int, str]:
    """The partition and the user stack in the RAM budget, sized by the partition."""
    return op.partition_bytes + op.stack_bytes, "partition_bytes"


def _smaller(op: MemoryDomain, excess: int) -> int | None:
    keep = op.partition_bytes - excess
    if keep < 32:
        return None
    return 1 << (keep.bit_length() - 1)


def _available(target: Target) -> bool:
    return mpu_regions(target) is not None


def _zephyr(b: ZephyrBuilder, index: int, op: MemoryDomain) -> dict[str, Any]:
    b.app.includes.update({"zephyr/app_memory/app_memdomain.h", "zephyr/sys/atomic.h"})
    return {
        "words": max(1, op.partition_bytes // 4) - 1,
        "stack": op.stack_bytes,
        "priority": op.priority,
        "period_ms": op.period_ms,
        "setup": True,
    }


SPEC = OpSpec(
    model=MemoryDomain,
    family="memory",
    flags=frozenset({Flag.VALUE}),
    realizations={"zephyr": Realization(template="memory", view=_zephyr, available=_available)},
    checks=(_check,),
    codes=(REGION, USER_MODE),
    ram=_storage,
    ram_relief=_smaller,
)
