"""The ``bounded`` backend: a seeded, deterministic tabu search with a fixed evaluation budget.

The priority permutation seeds the search (Giffler–Thompson decoding with job ranks), the hard pairs
are arcs of the disjunctive graph, so every candidate the search accepts respects them; the search
itself runs in :mod:`.kernels`. Same instance, relations, budget and seed → same schedule.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from rac_fw.domains.scheduling.backends import BackendResult
from rac_fw.domains.scheduling.backends.kernels import tabu_search
from rac_fw.domains.scheduling.instance import Instance
from rac_fw.domains.scheduling.relations import Relations

DEFAULT_BUDGET = 8192
DEFAULT_RESTARTS = 8


@dataclass(frozen=True)
class PairArcs:
    """Hard pairs as CSR adjacency in both directions (``pin`` = predecessors, ``pout`` = successors)."""

    pin_ptr: np.ndarray
    pin_src: np.ndarray
    pout_ptr: np.ndarray
    pout_dst: np.ndarray

    @classmethod
    def of(cls, n: int, pairs: list[tuple[int, int]]) -> PairArcs:
        def csr(keyed: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
            keyed = sorted(set(keyed))
            ptr = np.zeros(n + 1, dtype=np.int64)
            for key, _ in keyed:
                ptr[key + 1] += 1
            return np.cumsum(ptr), np.array([other for _, other in keyed], dtype=np.int64)

        pin_ptr, pin_src = csr([(b, a) for a, b in pairs])
        pout_ptr, pout_dst = csr(list(pairs))
        return cls(pin_ptr, pin_src, pout_ptr, pout_dst)


@dataclass(frozen=True)
class BoundedBackend:
    """Tabu search over machine orders: at most ``budget`` candidate evaluations and ``restarts`` starts.

    ``tenure`` is the minimum tabu tenure (drawn from ``[tenure, 2·tenure)``); ``patience`` is how many
    evaluations without a new best trigger a restart.
    """

    budget: int = DEFAULT_BUDGET
    restarts: int = DEFAULT_RESTARTS
    tenure: int = 8
    patience: int = 1024
    name: str = "bounded"

    def solve(self, instance: Instance, relations: Relations, seed: int) -> BackendResult:
        arr = instance.arrays
        n = len(instance.operations)
        rank = np.empty(instance.num_jobs, dtype=np.int64)
        rank[list(relations.priority)] = np.arange(instance.num_jobs)
        arcs = PairArcs.of(n, relations.pair_ids(instance))
        head = np.zeros(n, dtype=np.int64)
        t0 = time.perf_counter()
        makespan, evals = tabu_search(
            arr.duration, arr.machine, arr.job, arr.job_pred, arr.job_succ, arr.job_first, arr.job_len, rank,
            arcs.pin_ptr, arcs.pin_src, arcs.pout_ptr, arcs.pout_dst, instance.num_machines, arr.mach_local,
            instance.lower_bound, self.budget, self.restarts, seed, head, self.tenure, self.patience,
        )
        seconds = time.perf_counter() - t0
        return BackendResult(
            starts=[int(x) for x in head],
            claimed_makespan=int(makespan),
            stats={"evaluations": int(evals), "budget": self.budget, "restarts": self.restarts, "seed": seed,
                   "search_s": round(seconds, 4)},
        )
