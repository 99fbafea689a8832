"""The action: a soft job priority plus at most eight hard end-before-start pairs, and its validation.

Validation is two-staged and never repairs anything: the pydantic model checks shape (strict types,
no extra keys, at most eight pairs); :func:`check_relations` then checks the payload against the
instance (permutation, known operations, no cycle with the job precedences) and returns *all*
violations as located :class:`Evidence` — a cycle is named as its operation sequence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.scheduling.instance import Instance, op_name, parse_op_name

MAX_PAIRS = 8
BackendName = Literal["bounded", "cpsat"]

Pair = Annotated[list[str], Field(min_length=2, max_length=2, description="[a, b]: a ends before b starts.")]


class SchedulingPayload(BaseModel):
    """What the agent commits to for one job-shop task."""

    model_config = ConfigDict(extra="forbid", strict=True)

    priority: list[int] = Field(
        description="A permutation of all job indices; earlier jobs win machine conflicts (soft: the "
        "backend may deviate to shorten the makespan)."
    )
    before: list[Pair] = Field(
        default_factory=list,
        max_length=MAX_PAIRS,
        description=f"Up to {MAX_PAIRS} hard pairs [a, b] of operation names (j<job>o<index>): a must "
        "end before b starts. Every pair holds in the realized schedule.",
    )
    backend: BackendName | None = Field(
        default=None, description="Which backend realizes the relations (default: the task's, 'bounded')."
    )


@dataclass(frozen=True)
class Relations:
    """A validated action in dense form: job ranks and hard pairs between operation ids."""

    priority: tuple[int, ...]
    before: tuple[tuple[str, str], ...]
    backend: str | None

    def pair_ids(self, instance: Instance) -> list[tuple[int, int]]:
        return [(instance.index_of[a], instance.index_of[b]) for a, b in self.before]


def _path(loc: tuple[Any, ...]) -> str:
    return "payload" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)


def schema_evidence(exc: ValidationError) -> list[Evidence]:
    """One located evidence per schema error (``payload.before[2][0]`` style paths)."""
    out = []
    for err in exc.errors():
        path = _path(tuple(err["loc"]))
        out.append(Evidence(code="E_ACTION_SCHEMA", message=f"{path}: {err['msg']}", location=path))
    return out


def _check_priority(instance: Instance, priority: list[int]) -> list[Evidence]:
    n = instance.num_jobs
    out: list[Evidence] = []
    seen: dict[int, int] = {}
    given = set(priority)
    missing = [j for j in range(n) if j not in given]
    spare = iter(missing)
    for i, job in enumerate(priority):
        where = f"payload.priority[{i}]"
        if not 0 <= job < n:
            out.append(Evidence(code="E_NOT_PERMUTATION", location=where, objects=[f"job {job}"],
                                message=f"{where}: job {job} does not exist (jobs are 0..{n - 1})"))
        elif job in seen:
            fix = next(spare, None)
            relax = [] if fix is None else [Relaxation(
                description=f"put missing job {fix} at position {i}",
                patch=[{"op": "replace", "path": ["priority", i], "value": fix}])]
            out.append(Evidence(code="E_NOT_PERMUTATION", location=where, objects=[f"job {job}"],
                                message=f"{where}: job {job} repeats position {seen[job]}", relaxations=relax))
        else:
            seen[job] = i
    if missing:
        out.append(Evidence(
            code="E_NOT_PERMUTATION", location="payload.priority", objects=[f"job {j}" for j in missing],
            message=f"payload.priority: a permutation of jobs 0..{n - 1} is required; missing "
            + ", ".join(map(str, missing))))
    return out


def _check_names(instance: Instance, before: list[list[str]]) -> list[Evidence]:
    out = []
    for i, pair in enumerate(before):
        for k, name in enumerate(pair):
            if name in instance.index_of:
                continue
            where = f"payload.before[{i}][{k}]"
            parsed = parse_op_name(name)
            if parsed is None:
                why = "is not an operation name (expected j<job>o<index>, e.g. j2o4)"
            elif parsed[0] >= instance.num_jobs:
                why = f"names job {parsed[0]}, but jobs are 0..{instance.num_jobs - 1}"
            else:
                last = len(instance.jobs[parsed[0]]) - 1
                why = f"names no operation: job {parsed[0]} has {op_name(parsed[0], 0)}..{op_name(parsed[0], last)}"
            out.append(Evidence(code="E_UNKNOWN_OPERATION", location=where, objects=[name],
                                message=f"{where}: {name!r} {why}"))
    return out


def _find_cycle(instance: Instance, pairs: dict[int, tuple[int, int]]) -> list[int] | None:
    """A cycle of operation ids through job arcs and the pair arcs (keyed by pair index), or None."""
    n = len(instance.operations)
    succ: list[list[int]] = [[] for _ in range(n)]
    for i, op in enumerate(instance.operations):
        if op.index + 1 < len(instance.jobs[op.job]):
            succ[i].append(i + 1)
    for a, b in pairs.values():
        succ[a].append(b)
    color = [0] * n  # 0 new, 1 on stack, 2 done
    parent = [-1] * n
    for root in range(n):
        if color[root]:
            continue
        stack = [(root, 0)]
        color[root] = 1
        while stack:
            v, k = stack[-1]
            if k < len(succ[v]):
                stack[-1] = (v, k + 1)
                w = succ[v][k]
                if color[w] == 0:
                    color[w], parent[w] = 1, v
                    stack.append((w, 0))
                elif color[w] == 1:
                    cycle = [v]
                    while cycle[-1] != w:
                        cycle.append(parent[cycle[-1]])
                    return cycle[::-1]
            else:
                color[v] = 2
                stack.pop()
    return None


def _check_cycles(instance: Instance, before: list[list[str]]) -> list[Evidence]:
    """Report every independent cycle: find one, name it, drop its pairs, look again.

    Pairs naming an unknown operation are reported elsewhere and left out here, so the other pairs
    are still judged."""
    ops = instance.operations
    known = instance.index_of
    pairs = {i: (known[a], known[b]) for i, (a, b) in enumerate(before) if a in known and b in known}
    out = []
    while (cycle := _find_cycle(instance, pairs)) is not None:
        arcs = list(zip(cycle, cycle[1:] + cycle[:1], strict=True))
        involved = sorted(i for i, arc in pairs.items() if arc in arcs)
        names = [ops[v].name for v in cycle]
        sequence = " → ".join(names + names[:1])
        out.append(Evidence(
            code="E_CYCLE",
            location=f"payload.before[{involved[0]}]",
            objects=names,
            message=f"hard pairs {', '.join(f'payload.before[{i}]' for i in involved)} close a cycle with the "
            f"job precedences: {sequence}",
            relaxations=[Relaxation(description=f"drop payload.before[{i}] ({before[i][0]} before {before[i][1]})",
                                    patch=[{"op": "remove", "path": ["before", i]}]) for i in involved],
        ))
        for i in involved:
            del pairs[i]
    return out


def check_relations(instance: Instance, payload: dict[str, Any]) -> tuple[Relations | None, list[Evidence]]:
    """Validate a raw payload against the instance: the relations, or every violation found."""
    try:
        model = SchedulingPayload.model_validate(payload)
    except ValidationError as exc:
        return None, schema_evidence(exc)
    evidence = (
        _check_priority(instance, model.priority)
        + _check_names(instance, model.before)
        + _check_cycles(instance, model.before)
    )
    if evidence:
        return None, evidence
    before = tuple((a, b) for a, b in model.before)
    return Relations(priority=tuple(model.priority), before=before, backend=model.backend), []
