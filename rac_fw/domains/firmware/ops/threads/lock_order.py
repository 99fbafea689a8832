"""The ``lock_order`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.spec import OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


class LockOrder(Operation):
    """``threads`` each take ``locks`` in exactly this order (outermost first) and release in reverse.

    Two lock_order operations that name the same locks in different orders can deadlock
    (E_LOCK_ORDER).
    """

    op: Literal["lock_order"]
    locks: list[Name] = Field(min_length=2, max_length=4, description="Locks, outermost first.")
    threads: list[Name] = Field(min_length=1, max_length=8, description="Threads (resources.threads).")


SPEC = OpSpec(
    model=LockOrder,
    family="threads",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(template="threads"),
        "espidf": Realization(template="threads"),
    },
)
