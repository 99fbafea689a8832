"""The ``shared_state_mutex`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.spec import OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


class SharedStateMutex(Operation):
    """``threads`` update a shared state of ``state_bytes`` under one mutex (priority inheritance)."""

    op: Literal["shared_state_mutex"]
    lock: Name = Field(description="Name of the mutex.")
    threads: list[Name] = Field(min_length=2, max_length=8, description="Threads sharing the state.")
    state_bytes: int = Field(default=4, ge=1, le=4096)
    priority_inheritance: bool = Field(
        default=True, description="Use a priority-inheriting mutex (Zephyr k_mutex, FreeRTOS mutex)."
    )


SPEC = OpSpec(
    model=SharedStateMutex,
    family="threads",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(template="threads"),
        "espidf": Realization(template="threads"),
    },
)
