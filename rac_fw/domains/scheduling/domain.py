"""``SchedulingDomain``: job-shop scheduling on the five-operation contract.

Tasks are the Lawrence instances ``la01``…``la40`` or a path to a JSPLIB/Taillard instance file; a
task id may end in ``@bounded`` or ``@cpsat`` to choose the backend for every action on it (an action's
own ``backend`` field wins). The known optimum never enters this module.

The solvers (numba kernels, OR-Tools) come with the ``scheduling`` extra. The module itself stays cheap
to import (the CLI lists its commands on every start): each operation imports what it uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rac_fw.domain import Command, Domain, UnknownTask, Validation, Verification, model_ref
from rac_fw.domains.scheduling.backends import BACKENDS

if TYPE_CHECKING:
    from rac_fw.contract import Action, Feedback, Observation, Realization
    from rac_fw.domains.scheduling.instance import Instance, InstanceError
    from rac_fw.domains.scheduling.relations import Relations


class InvalidTaskFile(UnknownTask):
    """A task given as a file path whose content is not a readable instance (located message)."""

    def __init__(self, domain: str, task: str, error: InstanceError):
        super().__init__(domain, task, [])
        self.error = error
        self.args = (f"task {task!r}: {error}",)

    def __str__(self) -> str:
        return str(self.args[0])


class UnknownDetail(LookupError):
    """``observe(detail=…)`` named nothing in the instance."""


@dataclass
class ScheduleVerification(Verification):
    """Verification plus the judged schedule, so feedback can return start times of a valid one."""

    backend: str = ""
    makespan: int | None = None
    starts: dict[str, int] | None = None


@lru_cache(maxsize=64)
def _file_instance(path: str, mtime_ns: int) -> Instance:
    from rac_fw.domains.scheduling.instance import load_file

    return load_file(Path(path))


class SchedulingDomain(Domain):
    """Job-shop: the agent states relations, a backend builds the timetable, the verifier judges it."""

    name: ClassVar[str] = "scheduling"
    action_model = model_ref("rac_fw.domains.scheduling.relations:SchedulingPayload")
    install_extra: ClassVar[str | None] = "scheduling"

    @classmethod
    def commands(cls) -> list[Command]:
        return [
            Command("scheduling", "rac_fw.domains.scheduling.cli:calibrate_scheduling",
                    "Model-free calibration on LA01–LA40; ends with 'N passed, M failed'.", group="calibrate"),
            Command("scheduling", "rac_fw.domains.scheduling.cli:scheduling_app",
                    "Job-shop scheduling extras: the Code baseline."),
        ]

    def warm(self) -> None:
        """Compile the bounded search's kernels with one small solve (numba), so a turn does not."""
        from rac_fw.contract import Action

        task = self.tasks()[0]
        order = list(range(len(self.instance(task).jobs)))
        checked = self.validate(task, Action(domain=self.name, task=task, payload={"priority": order}))
        if checked.ok:
            self.realize(task, checked.action, 0)

    def __init__(
        self,
        default_backend: str = "bounded",
        budget: int | None = None,
        restarts: int | None = None,
        time_limit: float | None = None,
        workers: int | None = None,
    ):
        """Options default to each backend's own (imported here: the solvers load only when a domain is
        made, not when the CLI lists the domain's commands)."""
        from rac_fw.domains.scheduling.backends.bounded import DEFAULT_BUDGET, DEFAULT_RESTARTS
        from rac_fw.domains.scheduling.backends.cpsat import DEFAULT_TIME_LIMIT, DEFAULT_WORKERS

        if default_backend not in BACKENDS:
            raise ValueError(f"unknown backend {default_backend!r}; known: {', '.join(BACKENDS)}")
        self.default_backend = default_backend
        self.options: dict[str, dict[str, Any]] = {
            "bounded": {"budget": DEFAULT_BUDGET if budget is None else budget,
                        "restarts": DEFAULT_RESTARTS if restarts is None else restarts},
            "cpsat": {"time_limit": DEFAULT_TIME_LIMIT if time_limit is None else time_limit,
                      "workers": DEFAULT_WORKERS if workers is None else workers},
        }

    def tasks(self) -> list[str]:
        from rac_fw.domains.scheduling.instance import LAWRENCE

        return list(LAWRENCE)

    # --- task resolution -----------------------------------------------------------------------
    def split_task(self, task: str) -> tuple[str, str | None]:
        """``("la01", "cpsat")`` for ``la01@cpsat``; the suffix is optional."""
        base, sep, suffix = task.rpartition("@")
        if sep and suffix in BACKENDS:
            return base, suffix
        return task, None

    def instance(self, task: str) -> Instance:
        """The instance behind a task id (benchmark name or file path), or :class:`UnknownTask`."""
        from rac_fw.domains.scheduling.instance import LAWRENCE, InstanceError, load_benchmark

        base, _ = self.split_task(task)
        if base.lower() in LAWRENCE:
            return load_benchmark(base.lower())
        path = Path(base)
        if path.is_file():
            try:
                return _file_instance(str(path.resolve()), path.stat().st_mtime_ns)
            except InstanceError as exc:
                raise InvalidTaskFile(self.name, task, exc) from None
        raise UnknownTask(self.name, task, self.tasks() + ["<path to a JSPLIB/Taillard instance file>"])

    # --- observe ---------------------------------------------------------------------------------
    def observe(self, task: str, detail: str | None = None) -> Observation:
        from rac_fw.contract import Observation
        from rac_fw.domains.scheduling.relations import MAX_PAIRS

        inst = self.instance(task)
        _, task_backend = self.split_task(task)
        if detail is not None:
            return self._detail(task, inst, detail)
        data = {
            "num_jobs": inst.num_jobs,
            "num_machines": inst.num_machines,
            "num_operations": len(inst.operations),
            "jobs": [
                {"job": j, "operations": [{"op": op.name, "machine": op.machine, "duration": op.duration}
                                          for op in ops]}
                for j, ops in enumerate(inst.jobs)
            ],
            "relation_schema": {
                "priority": f"a permutation of all job indices 0..{inst.num_jobs - 1}; earlier jobs win machine "
                "conflicts in the starting schedule (soft: the backend may reorder to shorten the makespan)",
                "before": f"up to {MAX_PAIRS} hard pairs [a, b] of operation names: a ends before b starts "
                "(must not form a cycle with the job order)",
                "backend": f"optional, one of {list(BACKENDS)}; default {task_backend or self.default_backend!r}",
                "example": {"priority": list(range(inst.num_jobs)),
                            "before": [[inst.jobs[0][0].name, inst.jobs[-1][-1].name]]},
            },
            "objective": "minimize the makespan (end of the last operation)",
        }
        summary = (f"Job shop {inst.name}: {inst.num_jobs} jobs × {inst.num_machines} machines, "
                   f"{len(inst.operations)} operations; each job runs its operations in order, each machine "
                   "one operation at a time. State a job priority and up to 8 hard end-before-start pairs.")
        return Observation(domain=self.name, task=task, summary=summary, data=data)

    def _detail(self, task: str, inst: Instance, detail: str) -> Observation:
        """Depth on one job (``j3``), machine (``m2``) or operation (``j3o4``)."""
        from rac_fw.contract import Observation

        text = detail.strip().lower()
        if text in inst.index_of:
            op = inst.operations[inst.index_of[text]]
            job = inst.jobs[op.job]
            data: dict[str, Any] = {
                "op": op.name, "job": op.job, "index": op.index, "machine": op.machine, "duration": op.duration,
                "job_predecessor": job[op.index - 1].name if op.index > 0 else None,
                "job_successor": job[op.index + 1].name if op.index + 1 < len(job) else None,
                "same_machine": [o.name for o in inst.operations if o.machine == op.machine and o is not op],
            }
        elif text[:1] == "j" and text[1:].isdigit() and int(text[1:]) < inst.num_jobs:
            ops = inst.jobs[int(text[1:])]
            data = {"job": int(text[1:]),
                    "operations": [{"op": o.name, "machine": o.machine, "duration": o.duration} for o in ops]}
        elif text[:1] == "m" and text[1:].isdigit() and int(text[1:]) < inst.num_machines:
            ops_m = [o for o in inst.operations if o.machine == int(text[1:])]
            data = {"machine": int(text[1:]),
                    "operations": [{"op": o.name, "duration": o.duration} for o in ops_m]}
        else:
            raise UnknownDetail(
                f"{detail!r} names nothing in {inst.name}: ask for a job (j0..j{inst.num_jobs - 1}), a machine "
                f"(m0..m{inst.num_machines - 1}) or an operation (e.g. {inst.jobs[0][0].name})")
        return Observation(domain=self.name, task=task, summary=f"{inst.name}: detail of {text}", data=data)

    # --- validate / realize / verify -------------------------------------------------------------
    def validate(self, task: str, action: Action) -> Validation:
        from rac_fw.domains.scheduling.relations import check_relations

        relations, evidence = check_relations(self.instance(task), action.payload)
        return Validation(action=relations, evidence=evidence)

    def backend_for(self, task: str, relations: Relations) -> str:
        return relations.backend or self.split_task(task)[1] or self.default_backend

    def realize(self, task: str, action: Any, seed: int) -> Realization:
        from rac_fw.contract import Realization, Receipt, sha256_of
        from rac_fw.domains.scheduling.backends import get_backend

        relations: Relations = action
        inst = self.instance(task)
        name = self.backend_for(task, relations)
        result = get_backend(name, **self.options[name]).solve(inst, relations, seed)
        artifact: dict[str, Any] = {"backend": name, "starts": None, "ends": None}
        if result.starts is not None:
            artifact["starts"] = {op.name: t for op, t in zip(inst.operations, result.starts, strict=True)}
            artifact["ends"] = {op.name: t + op.duration for op, t in zip(inst.operations, result.starts,
                                                                           strict=True)}
        receipt = Receipt(
            realized=[f"priority {list(relations.priority)}"] + [f"{a} before {b}" for a, b in relations.before],
            claims_success=result.starts is not None,
            notes=[f"claimed makespan {result.claimed_makespan}", *result.notes,
                   *(f"{k}={v}" for k, v in result.stats.items())],
        )
        return Realization(artifact=artifact, artifact_hash=sha256_of(artifact), receipt=receipt, seed=seed)

    def verify(self, task: str, action: Any, realization: Realization) -> ScheduleVerification:
        from rac_fw.domains.scheduling.verify import check_schedule

        relations: Relations = action
        artifact = realization.artifact
        check = check_schedule(self.instance(task), relations.before, artifact.get("starts"), artifact.get("ends"))
        return ScheduleVerification(verdicts=check.verdicts, evidence=check.evidence,
                                    backend=str(artifact.get("backend", "")), makespan=check.makespan,
                                    starts=check.starts if check.valid else None)

    # --- feedback --------------------------------------------------------------------------------
    def feedback(self, task: str, validation: Validation, verification: Verification | None) -> Feedback:
        """Default feedback; for a valid schedule the observation carries its makespan and start times."""
        from rac_fw.contract import Observation, Status

        fb = super().feedback(task, validation, verification)
        if fb.status is Status.PASS and isinstance(verification, ScheduleVerification):
            fb.observation = Observation(
                domain=self.name, task=task,
                summary=f"valid schedule from backend {verification.backend}: makespan {verification.makespan}",
                data={"schedule": {"backend": verification.backend, "makespan": verification.makespan,
                                   "starts": verification.starts}},
            )
        return fb
