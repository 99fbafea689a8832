"""The independent schedule checker.

It reads only the instance, the hard pairs and the proposed start (and optionally end) times, and
recomputes everything itself: completeness, durations, job precedence, machine overlap, hard pairs and
the makespan. It imports nothing from the backends and never reads a realizer's claimed makespan, so a
buggy backend, a forged artifact or a Code-baseline program is judged by the same rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rac_fw.contract import Evidence, Magnitude, Relaxation, Verdict
from rac_fw.domains.scheduling.instance import Instance, Operation

#: At most this many evidence items per predicate; the verdict still counts all violations.
MAX_EVIDENCE_PER_PREDICATE = 12
TIME_UNIT = "time units"


@dataclass
class ScheduleCheck:
    """Verdicts and evidence for one schedule, plus its makespan when the schedule is valid."""

    verdicts: list[Verdict]
    evidence: list[Evidence]
    makespan: int | None
    starts: dict[str, int] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return all(v.passed for v in self.verdicts) and not self.evidence


def _times(raw: Any, what: str, instance: Instance) -> tuple[dict[str, int], list[Evidence]]:
    """Read ``{operation: integer time ≥ 0}``; unknown names and non-integers become evidence."""
    if not isinstance(raw, Mapping):
        return {}, [Evidence(code="E_SCHEDULE_FORMAT", location=what,
                             message=f"{what} must map operation names to integer times")]
    times: dict[str, int] = {}
    evidence = []
    for name, value in raw.items():
        where = f"{what}.{name}"
        if name not in instance.index_of:
            evidence.append(Evidence(code="E_SCHEDULE_UNKNOWN_OPERATION", location=where, objects=[str(name)],
                                     message=f"{where}: no operation named {str(name)[:40]!r} in this instance"))
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            evidence.append(Evidence(code="E_SCHEDULE_FORMAT", location=where, objects=[name],
                                     message=f"{where}: expected an integer time ≥ 0, got {str(value)[:40]!r}"))
        else:
            times[name] = value
    return times, evidence


def _limited(items: list[Evidence]) -> list[Evidence]:
    return items[:MAX_EVIDENCE_PER_PREDICATE]


def _overlap_evidence(machine: int, a: Operation, b: Operation, start: Mapping[str, int],
                      end: Mapping[str, int]) -> Evidence:
    overlap = min(end[a.name], end[b.name]) - max(start[a.name], start[b.name])
    return Evidence(
        code="E_MACHINE_OVERLAP",
        location=f"machine {machine}",
        objects=[a.name, b.name, f"machine {machine}"],
        message=f"{a.name} [{start[a.name]}, {end[a.name]}) and {b.name} [{start[b.name]}, {end[b.name]}) "
        f"overlap on machine {machine} by {overlap}",
        magnitudes=[Magnitude(name="overlap", value=overlap, unit=TIME_UNIT)],
        relaxations=[Relaxation(description=f"start {b.name} at {end[a.name]} or later, after {a.name} ends")],
    )


def check_schedule(
    instance: Instance,
    pairs: list[tuple[str, str]] | tuple[tuple[str, str], ...],
    starts: Any,
    ends: Any = None,
) -> ScheduleCheck:
    """Judge a schedule: ``starts`` (and optional ``ends``) map operation names to integer times."""
    start, evidence = _times(starts, "starts", instance)
    given = starts if isinstance(starts, Mapping) else {}
    missing = [op.name for op in instance.operations if op.name not in given]
    if missing:
        evidence.append(Evidence(
            code="E_SCHEDULE_INCOMPLETE", location="starts", objects=missing[:40],
            message=f"no start time for {len(missing)} operation(s): {', '.join(missing[:10])}"
            + (" …" if len(missing) > 10 else "")))
    verdicts = [Verdict(predicate="complete", passed=not evidence, measured=len(start),
                        limit=len(instance.operations), unit="operations")]
    if evidence:
        return ScheduleCheck(verdicts=verdicts, evidence=evidence, makespan=None)

    ops = instance.operations
    end = {op.name: start[op.name] + op.duration for op in ops}
    duration_ev: list[Evidence] = []
    if ends is not None:
        claimed, format_ev = _times(ends, "ends", instance)
        duration_ev.extend(format_ev)
        for op in ops:
            if op.name in claimed and claimed[op.name] != end[op.name]:
                got = claimed[op.name] - start[op.name]
                duration_ev.append(Evidence(
                    code="E_DURATION", location=f"ends.{op.name}", objects=[op.name],
                    message=f"{op.name} runs {got} but its duration is {op.duration}",
                    magnitudes=[Magnitude(name="duration error", value=got - op.duration, unit=TIME_UNIT)]))
    verdicts.append(Verdict(predicate="durations", passed=not duration_ev, measured=len(duration_ev),
                            limit=0, unit="violations",
                            detail=None if ends is not None else "end = start + duration (no end times given)"))

    precedence_ev = []
    for job in instance.jobs:
        for a, b in zip(job, job[1:], strict=False):
            if start[b.name] < end[a.name]:
                gap = end[a.name] - start[b.name]
                precedence_ev.append(Evidence(
                    code="E_PRECEDENCE", location=f"starts.{b.name}", objects=[a.name, b.name],
                    message=f"{b.name} starts at {start[b.name]}, {gap} before its job predecessor {a.name} "
                    f"ends at {end[a.name]}",
                    magnitudes=[Magnitude(name="early start", value=gap, unit=TIME_UNIT)],
                    relaxations=[Relaxation(description=f"start {b.name} at {end[a.name]} or later")]))
    verdicts.append(Verdict(predicate="job_precedence", passed=not precedence_ev, measured=len(precedence_ev),
                            limit=0, unit="violations"))

    overlap_ev = []
    by_machine: dict[int, list[Operation]] = {}
    for op in ops:
        by_machine.setdefault(op.machine, []).append(op)
    for machine in sorted(by_machine):
        timeline = sorted(by_machine[machine], key=lambda o: (start[o.name], end[o.name], o.name))
        for i, a in enumerate(timeline):
            for b in timeline[i + 1:]:
                if start[b.name] >= end[a.name]:
                    break
                if min(end[a.name], end[b.name]) > max(start[a.name], start[b.name]):
                    overlap_ev.append(_overlap_evidence(machine, a, b, start, end))
    verdicts.append(Verdict(predicate="machine_capacity", passed=not overlap_ev, measured=len(overlap_ev),
                            limit=0, unit="overlapping pairs"))

    pair_ev = []
    for i, (first, then) in enumerate(pairs):
        if start[then] < end[first]:
            gap = end[first] - start[then]
            pair_ev.append(Evidence(
                code="E_HARD_PAIR", location=f"payload.before[{i}]", objects=[first, then],
                message=f"hard pair {first} before {then} violated: {then} starts at {start[then]}, {gap} before "
                f"{first} ends at {end[first]}",
                magnitudes=[Magnitude(name="violation", value=gap, unit=TIME_UNIT)]))
    verdicts.append(Verdict(predicate="hard_pairs", passed=not pair_ev, measured=len(pair_ev), limit=0,
                            unit="violations", detail=f"{len(pairs)} pair(s) required"))

    evidence = (_limited(duration_ev) + _limited(precedence_ev) + _limited(overlap_ev) + _limited(pair_ev))
    valid = not evidence
    makespan = max(end.values()) if valid else None
    verdicts.append(Verdict(predicate="makespan", passed=valid, measured=makespan, unit=TIME_UNIT,
                            limit=None, detail="computed by the verifier from the start times"
                            if valid else "no makespan: the schedule is invalid"))
    return ScheduleCheck(verdicts=verdicts, evidence=evidence, makespan=makespan, starts=start if valid else {})
