"""Schedule backends: each turns validated relations into start times for every operation.

A backend is a small class with a ``name`` and a ``solve`` method; :data:`BACKENDS` is the registry the
domain asks. Backends claim a makespan in their result, but the verifier recomputes it from the start
times and never reads the claim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rac_fw.domains.scheduling.instance import Instance
    from rac_fw.domains.scheduling.relations import Relations


@dataclass
class BackendResult:
    """Start times by dense operation id (``None`` when no schedule was found) plus what it cost."""

    starts: list[int] | None
    claimed_makespan: int | None
    stats: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class ScheduleBackend(Protocol):
    @property
    def name(self) -> str: ...

    def solve(self, instance: Instance, relations: Relations, seed: int) -> BackendResult: ...


def get_backend(name: str, **options: Any) -> ScheduleBackend:
    """Instantiate a backend by name with its options (``budget``, ``time_limit``, ``workers`` …)."""
    if name == "bounded":
        from rac_fw.domains.scheduling.backends.bounded import BoundedBackend

        return BoundedBackend(**options)
    if name == "cpsat":
        from rac_fw.domains.scheduling.backends.cpsat import CpSatBackend

        return CpSatBackend(**options)
    raise KeyError(f"unknown scheduling backend {name!r}; known: {', '.join(BACKENDS)}")


BACKENDS = ("bounded", "cpsat")
