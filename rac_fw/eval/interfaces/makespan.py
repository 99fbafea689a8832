"""Scheduling quality as the paper defines it: a valid schedule passes when its makespan ≤ 1.25 × C*.

C* is the published optimum of the Lawrence instance (``scheduling.instance.known_optimum``, read here
and in calibration only). It is used after the verifier has accepted a proposal, to grade it; it never
enters a prompt, a tool definition or a tool result, so the model never sees it. The makespan is the
verifier's own measurement (the ``makespan`` verdict), never a backend's or a program's claim.
"""

from __future__ import annotations

from rac_fw.contract import Feedback
from rac_fw.eval.interfaces import Quality


def makespan_quality(task: str, feedback: Feedback) -> Quality | None:
    """Quality of an accepted schedule: makespan, optimum C*, gap (makespan / C* − 1), and the pass."""
    from rac_fw.domains.scheduling.calibrate import QUALITY_THRESHOLD
    from rac_fw.domains.scheduling.instance import known_optimum

    optimum = known_optimum(task)
    measured = next((v.measured for v in feedback.verdicts if v.predicate == "makespan" and v.passed), None)
    if optimum is None or measured is None:
        return None
    makespan = float(measured)
    return Quality(passed=makespan <= QUALITY_THRESHOLD * optimum,
                   metrics={"makespan": makespan, "optimum": float(optimum), "gap": makespan / optimum - 1.0})
