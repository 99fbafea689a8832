"""Calibration: the model-free control (input job order, no hard pairs) on LA01–LA40.

This is the only place that reads the known optima. Each instance goes through the domain's own
validate → realize → verify, so the makespan measured is the verifier's, not the backend's claim.
A row passes when the schedule is valid and its makespan is within ``threshold`` × optimum.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rac_fw.contract import Action
from rac_fw.domains.scheduling.domain import SchedulingDomain
from rac_fw.domains.scheduling.instance import LAWRENCE, known_optimum

QUALITY_THRESHOLD = 1.25


@dataclass(frozen=True)
class CalibrationRow:
    """One instance: the verified makespan against the published optimum, and the wall time spent."""

    task: str
    makespan: int | None
    optimum: int
    seconds: float

    @property
    def gap(self) -> float | None:
        return None if self.makespan is None else self.makespan / self.optimum - 1.0

    @property
    def passed(self) -> bool:
        return self.makespan is not None and self.makespan <= QUALITY_THRESHOLD * self.optimum

    @property
    def optimal(self) -> bool:
        return self.makespan == self.optimum


def control_payload(num_jobs: int, backend: str) -> dict[str, object]:
    """The model-free control: jobs in input order, no hard relations."""
    return {"priority": list(range(num_jobs)), "before": [], "backend": backend}


def warm_up(domain: SchedulingDomain, backend: str) -> float:
    """Run once untimed (numba loads or compiles its kernels); returns the seconds it took."""
    t0 = time.perf_counter()
    run_one(domain, "la01", backend)
    return time.perf_counter() - t0


def run_one(domain: SchedulingDomain, task: str, backend: str, seed: int = 0) -> CalibrationRow:
    inst = domain.instance(task)
    optimum = known_optimum(task)
    if optimum is None:
        raise LookupError(f"{task} has no published optimum")
    t0 = time.perf_counter()
    action = Action(domain=domain.name, task=task, payload=control_payload(inst.num_jobs, backend))
    validation = domain.validate(task, action)
    if not validation.ok:  # cannot happen for the control payload; fail loudly rather than mis-measure
        raise RuntimeError(f"control action rejected on {task}: {validation.evidence}")
    realization = domain.realize(task, validation.action, seed)
    verification = domain.verify(task, validation.action, realization)
    return CalibrationRow(task=task, makespan=verification.makespan, optimum=optimum,
                          seconds=time.perf_counter() - t0)


def calibrate(domain: SchedulingDomain, backend: str, tasks: Iterable[str] = LAWRENCE) -> Iterator[CalibrationRow]:
    """One row per task, yielded as soon as it is measured (the CLI prints them live)."""
    for task in tasks:
        yield run_one(domain, task, backend)
