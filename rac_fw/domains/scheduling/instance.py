"""Job-shop instances: the Lawrence benchmarks (shipped as JSPLIB files, ``lawrence/``) and instance
files given by path.

An :class:`Instance` holds only what an agent may know (jobs, machines, durations). The known optimum
of a benchmark is deliberately *not* a field: :func:`known_optimum` is the single door to it and only
calibration (and the report) opens it, so no observation or feedback can leak it by accident.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: The benchmark tasks this domain offers by name (``lawrence/SOURCE.md``: origin and licence).
LAWRENCE = tuple(f"la{i:02d}" for i in range(1, 41))
#: Where the Lawrence instances and their published optima live.
LAWRENCE_DIR = Path(__file__).with_name("lawrence")

_OP_NAME = re.compile(r"^j(0|[1-9][0-9]*)o(0|[1-9][0-9]*)$")


class InstanceError(ValueError):
    """An instance file could not be read; ``location`` names file and line."""

    def __init__(self, message: str, location: str):
        self.location = location
        super().__init__(f"{location}: {message}")


def op_name(job: int, index: int) -> str:
    """The agent-facing name of operation ``index`` of ``job`` (both 0-based): ``j<job>o<index>``."""
    return f"j{job}o{index}"


def parse_op_name(name: str) -> tuple[int, int] | None:
    """``(job, index)`` of a well-formed operation name, else ``None``."""
    match = _OP_NAME.match(name)
    return (int(match[1]), int(match[2])) if match else None


@dataclass(frozen=True)
class Operation:
    """One operation: it must run on ``machine`` for ``duration`` time units without interruption."""

    job: int
    index: int
    machine: int
    duration: int

    @property
    def name(self) -> str:
        return op_name(self.job, self.index)


@dataclass(frozen=True)
class Instance:
    """A job-shop instance: each job is an ordered list of operations; each machine runs one at a time."""

    name: str
    jobs: tuple[tuple[Operation, ...], ...]
    num_machines: int

    @property
    def num_jobs(self) -> int:
        return len(self.jobs)

    @cached_property
    def operations(self) -> tuple[Operation, ...]:
        """All operations in job-major order; the position here is the operation's dense id."""
        return tuple(op for job in self.jobs for op in job)

    @cached_property
    def index_of(self) -> dict[str, int]:
        """Dense id of each operation name."""
        return {op.name: i for i, op in enumerate(self.operations)}

    @cached_property
    def lower_bound(self) -> int:
        """Trivial lower bound from the data alone: the longest job or the busiest machine."""
        loads = [0] * self.num_machines
        for op in self.operations:
            loads[op.machine] += op.duration
        return max(max(sum(op.duration for op in job) for job in self.jobs), max(loads))

    @cached_property
    def arrays(self) -> InstanceArrays:
        return InstanceArrays.of(self)


@dataclass(frozen=True)
class InstanceArrays:
    """Dense int64 arrays of an instance for the compiled backends (ids as in ``Instance.operations``)."""

    duration: np.ndarray
    machine: np.ndarray
    job: np.ndarray
    job_pred: np.ndarray  # previous operation of the same job, -1 for the first
    job_succ: np.ndarray  # next operation of the same job, -1 for the last
    job_first: np.ndarray  # id of each job's first operation
    job_len: np.ndarray  # number of operations of each job
    mach_local: np.ndarray  # position of each operation among its machine's operations (id order)

    @classmethod
    def of(cls, instance: Instance) -> InstanceArrays:
        import numpy as np  # the compiled backends' arrays (the scheduling extra)

        ops = instance.operations
        n = len(ops)
        job_first = np.zeros(instance.num_jobs, dtype=np.int64)
        job_len = np.array([len(job) for job in instance.jobs], dtype=np.int64)
        job_first[1:] = np.cumsum(job_len)[:-1]
        pred = np.full(n, -1, dtype=np.int64)
        succ = np.full(n, -1, dtype=np.int64)
        local = np.zeros(n, dtype=np.int64)
        seen = [0] * instance.num_machines
        for i, op in enumerate(ops):
            local[i] = seen[op.machine]
            seen[op.machine] += 1
            if op.index > 0:
                pred[i] = i - 1
            if op.index < job_len[op.job] - 1:
                succ[i] = i + 1
        return cls(
            duration=np.array([op.duration for op in ops], dtype=np.int64),
            machine=np.array([op.machine for op in ops], dtype=np.int64),
            job=np.array([op.job for op in ops], dtype=np.int64),
            job_pred=pred,
            job_succ=succ,
            job_first=job_first,
            job_len=job_len,
            mach_local=local,
        )


def from_matrices(name: str, machines: list[list[int]], durations: list[list[int]]) -> Instance:
    """Build an instance from per-job machine and duration rows (machines 0-based)."""
    num_machines = 1 + max((m for row in machines for m in row), default=-1)
    jobs = tuple(
        tuple(Operation(j, k, int(m), int(d)) for k, (m, d) in enumerate(zip(mrow, drow, strict=True)))
        for j, (mrow, drow) in enumerate(zip(machines, durations, strict=True))
    )
    return Instance(name=name, jobs=jobs, num_machines=num_machines)


@cache
def load_benchmark(name: str) -> Instance:
    """A Lawrence instance (``la01`` … ``la40``) from its JSPLIB file."""
    path = LAWRENCE_DIR / f"{name}.txt"
    return parse_instance_text(path, path.read_text(encoding="utf-8"))


@cache
def _optima() -> dict[str, int]:
    found = {}
    for line in (LAWRENCE_DIR / "optima.txt").read_text(encoding="utf-8").splitlines():
        name, _, value = line.split("#", 1)[0].strip().partition(" ")
        if name:
            found[name] = int(value)
    return found


def known_optimum(name: str) -> int | None:
    """The published optimum of a benchmark instance — for calibration only, never for an agent."""
    return _optima().get(name)


def _numeric_rows(path: Path, text: str) -> list[tuple[int, list[int]]]:
    """``(line number, integers)`` for every data line; comments (#) and word-only lines are skipped."""
    rows = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line or not re.match(r"^[-+]?\d", line):
            continue  # blank, comment, or a section word such as "Times" / "Machines" / a header title
        try:
            rows.append((number, [int(tok) for tok in line.replace(",", " ").split()]))
        except ValueError:
            # the line itself is not echoed: a task path may name a file that is not an instance at all
            raise InstanceError("expected only integers on this line", f"{path}:{number}") from None
    return rows


def parse_instance_text(path: Path, text: str) -> Instance:
    """Parse the JSPLIB (standard) or Taillard text format.

    Standard: a line ``jobs machines`` then one line per job of ``machine duration`` pairs (0-based
    machines). Taillard: ``jobs machines [seeds bounds…]``, then ``jobs`` lines of durations and ``jobs``
    lines of machines (1-based). Extra header numbers (Taillard's seeds and bounds) are ignored.
    """
    rows = _numeric_rows(path, text)
    if not rows:
        raise InstanceError("no data: expected a line 'jobs machines'", str(path))
    head_line, head = rows[0]
    if len(head) < 2 or head[0] <= 0 or head[1] <= 0:
        raise InstanceError("header must start with two positive integers: jobs machines", f"{path}:{head_line}")
    n, m = head[0], head[1]
    body = rows[1:]
    if len(body) == n and all(len(r) == 2 * m for _, r in body):
        machines = [r[0::2] for _, r in body]
        durations = [r[1::2] for _, r in body]
        first_machine = 0
    elif len(body) == 2 * n and all(len(r) == m for _, r in body):
        durations = [r for _, r in body[:n]]
        machines = [[x - 1 for x in r] for _, r in body[n:]]
        first_machine = 1
    else:
        raise InstanceError(
            f"header says {n} jobs × {m} machines: expected {n} lines of {2 * m} integers (standard) or "
            f"{2 * n} lines of {m} integers (Taillard), found {len(body)} data lines "
            f"with lengths {sorted({len(r) for _, r in body})}",
            f"{path}:{head_line}",
        )
    for j, (mrow, drow) in enumerate(zip(machines, durations, strict=True)):
        duration_line = body[j][0]
        machine_line = duration_line if first_machine == 0 else body[n + j][0]
        for k, (mach, dur) in enumerate(zip(mrow, drow, strict=True)):
            if not 0 <= mach < m:
                raise InstanceError(
                    f"operation {op_name(j, k)}: machine {mach + first_machine} outside "
                    f"{first_machine}..{m - 1 + first_machine}",
                    f"{path}:{machine_line}",
                )
            if dur < 0:
                raise InstanceError(f"operation {op_name(j, k)}: negative duration {dur}", f"{path}:{duration_line}")
    return from_matrices(path.stem, machines, durations)


def load_file(path: Path) -> Instance:
    """Read an instance file; unreadable or malformed files raise :class:`InstanceError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"cannot read instance file: {exc}", str(path)) from None
    return parse_instance_text(path, text)
