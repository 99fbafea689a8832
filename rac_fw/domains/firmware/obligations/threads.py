"""E_LOCK_ORDER: all threads take shared locks in one global order (no lock-order inversion).

Each ``lock_order`` operation states an order; two operations that order the same pair of locks
differently can deadlock. The relaxation reorders the later operation to the order established first.
"""

from __future__ import annotations

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.threads.lock_order import LockOrder
from rac_fw.domains.firmware.plan.evidence import Path, relax, replace, violation
from rac_fw.domains.firmware.plan.model import Plan


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Lock orders must agree pairwise and name each lock once."""
    found: list[Evidence] = []
    before: dict[tuple[str, str], str] = {}
    rank: dict[str, int] = {}
    for i, op in enumerate(plan.operations):
        if not isinstance(op, LockOrder):
            continue
        path: Path = ["operations", i, "locks"]
        label = op.name or f"operations[{i}]"
        unique = list(dict.fromkeys(op.locks))
        if len(unique) != len(op.locks):
            found.append(
                violation(
                    "E_LOCK_ORDER",
                    f"{label} takes a lock twice (self-deadlock on a non-recursive mutex)",
                    path,
                    unique,
                    relaxations=[relax("take each lock once", replace(path, unique))],
                )
            )
        inverted = [(a, b) for x, a in enumerate(unique) for b in unique[x + 1 :] if (b, a) in before]
        if inverted:
            a, b = inverted[0]
            fixed = sorted(unique, key=lambda lock: rank.get(lock, len(rank) + unique.index(lock)))
            found.append(
                violation(
                    "E_LOCK_ORDER",
                    f"{label} takes {a} before {b}, but {before[(b, a)]} takes {b} before {a}: the two can deadlock",
                    path,
                    [a, b, label, before[(b, a)]],
                    relaxations=[
                        relax(f"take the locks in the established order {' → '.join(fixed)}", replace(path, fixed))
                    ],
                )
            )
            continue
        for x, a in enumerate(unique):
            rank.setdefault(a, len(rank))
            for b in unique[x + 1 :]:
                before.setdefault((a, b), label)
    return found
