"""Calibration of the logic domain: does the verifier accept what is right and reject what is wrong?

For each design, four checks run through the turn runtime:
1. the correct action is accepted;
2. an action changed on one truth-table row is rejected;
3. a hand-modified artifact sent with a forged success receipt (and a recomputed hash) is rejected;
4. a two-step repair trace — a wrong action, then that action with the first relaxation from the
   feedback applied — goes fail → pass within one episode.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

from rac_fw.contract import Action, Receipt, Status, sha256_of
from rac_fw.domains.logic.domain import LogicDomain
from rac_fw.domains.logic.tasks import LogicTask, get_task
from rac_fw.runtime import Episode


@dataclass(frozen=True)
class CheckResult:
    design: str
    check: str
    ok: bool
    detail: str


def correct_payload(task: LogicTask) -> dict[str, dict[str, list[int]]]:
    return {"outputs": {out: sorted(task.ones[out]) for out in task.outputs}}


def flipped_payload(task: LogicTask, output: str, row: int) -> dict[str, dict[str, list[int]]]:
    payload = correct_payload(task)
    rows = set(payload["outputs"][output]) ^ {row}
    payload["outputs"][output] = sorted(rows)
    return payload


def _action(task: str, payload: dict) -> Action:
    return Action(domain="logic", task=task, payload=payload)


def calibrate_design(domain: LogicDomain, name: str) -> Iterator[CheckResult]:
    task = get_task(name)
    first, last = task.outputs[0], task.outputs[-1]

    fb = Episode(domain, name).submit(_action(name, correct_payload(task)))
    yield CheckResult(name, "correct action accepted", fb.status is Status.PASS, fb.status.value)

    fb = Episode(domain, name).submit(_action(name, flipped_payload(task, first, 0)))
    codes = sorted({e.code for e in fb.evidence})
    yield CheckResult(name, "one-row change rejected", fb.status is Status.FAIL and "E_TRUTH_TABLE" in codes,
                      f"{fb.status.value} {codes}")

    action = _action(name, correct_payload(task))
    validation = domain.validate(name, action)
    honest = domain.realize(name, validation.action, seed=0)
    forged_net = copy.deepcopy(honest.artifact)
    driver = forged_net["outputs"][first]
    forged_net["gates"].append({"id": "forged", "op": "NOT", "in": [driver]})
    forged_net["outputs"][first] = "forged"
    forged = honest.model_copy(update={
        "artifact": forged_net,
        "artifact_hash": sha256_of(forged_net),
        "receipt": Receipt(realized=honest.receipt.realized, claims_success=True, notes=["all outputs verified"]),
    })
    verification = domain.verify(name, validation.action, forged)
    yield CheckResult(name, "forged artifact rejected", not verification.ok,
                      f"{sum(not v.passed for v in verification.verdicts)} failed predicate(s)")

    episode = Episode(domain, name, budget=2)
    step1 = episode.submit(_action(name, flipped_payload(task, last, task.rows - 1)))
    relaxations = [r for e in step1.evidence for r in e.relaxations]
    statuses = [step1.status.value]
    if relaxations:
        step2 = episode.submit(_action(name, relaxations[0].apply(episode.turns[0].action.payload)))
        statuses.append(step2.status.value)
    yield CheckResult(name, "repair trace fail → pass", statuses == ["fail", "pass"], " → ".join(statuses))


def calibrate(designs: list[str] | None = None) -> list[CheckResult]:
    domain = LogicDomain()
    results: list[CheckResult] = []
    for name in designs or domain.tasks():
        results.extend(calibrate_design(domain, name))
    return results
