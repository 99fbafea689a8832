"""A relaxation is a promise: only relaxations whose patched plan validates are offered.

Each obligation proposes relaxations from the facts it knows (free pins, reachable regions, nearest
admissible values), but a change that repairs one rule can break another (a free pin that is reserved
for the board, one of three buffers moved when all three overflow, a shorter source making a copy's
destination too short). Rather than every rule re-deriving every other rule, each proposal is
*tested* here, once: the patch is applied to the plan document, the result is parsed and every
obligation runs on it. A relaxation survives when the violation it answers is gone and nothing new
appeared (violations the plan had besides it may remain: each relaxation answers one violation).

Obligations never import a lowering (they ask the support matrix), so whatever still judges a plan
after them — a lowering that refuses part of a valid plan — is passed in as ``accepts`` by the caller
that runs both (the pipeline); a patched plan every rule accepts must then satisfy it too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from rac_fw.contract import Evidence, PatchError, Relaxation, apply_patch
from rac_fw.domains.firmware.facts.load import UnknownTarget, load_target
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.obligations.incremental import Delta, Judge, Key, Units, candidate, key, parsed_operations
from rac_fw.domains.firmware.plan.model import Plan

Checker = Callable[[Plan, Target, str], list[Evidence]]
Acceptor = Callable[[Plan, Target, str], bool]
"""Judges a plan every obligation accepts (the pipeline passes its lowering); None: rules only."""


def document(plan: Plan) -> dict[str, Any]:
    """The plan as the dict its author wrote (fields left at their default stay omitted, ``wifi: true`` not
    expanded into its station), which is what relaxation patches are written against."""
    data = plan.model_dump(mode="json", exclude_unset=True)
    if plan.shorthand is not None:
        del data["operations"][plan.shorthand]
        data["wifi"] = True
    return data


def authored(plan: Plan, patch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``patch``, written against the parsed plan, as a patch of the document its author wrote: steps on the
    station ``wifi: true`` stands for become ``wifi: false`` and that station declared with the steps applied
    (dropping the station is ``wifi: false``)."""
    station = plan.shorthand
    if station is None or not any(_at(step, station) for step in patch):
        return patch
    declared: dict[str, Any] | None = plan.operations[station].model_dump(mode="json", exclude_unset=True)
    kept: list[dict[str, Any]] = []
    for step in patch:
        if not _at(step, station):
            kept.append(step)
        elif len(step["path"]) == 2:
            declared = None if step.get("op") == "remove" else step.get("value")
        elif declared is not None:
            declared = apply_patch(declared, [{**step, "path": step["path"][2:]}])
    kept.append({"op": "replace", "path": ["wifi"], "value": False})
    if declared is not None:
        kept.append({"op": "add", "path": ["operations", "-"], "value": declared})
    return kept


def _at(step: dict[str, Any], position: int) -> bool:
    path = list(step.get("path") or [])
    return len(path) >= 2 and path[0] == "operations" and path[1] == position


#: Most relaxations offered per violation: rules may propose more (every achievable baud rate, every
#: free pin of the right kind), the first that validate are kept.
MAX_OFFERED = 6


class _Candidates:
    """Judges patches of one plan: each distinct patch once, by difference (``incremental.Judge``) when
    it keeps the framework, by a full run of the rules when it switches it."""

    def __init__(self, plan: Plan, target: Target, framework: str, found: list[Evidence], rules: Checker,
                 units: Units, accepts: Acceptor | None):
        self.plan, self.target, self.framework = plan, target, framework
        self.rules, self.accepts = rules, accepts
        self.data = document(plan)
        self.judge = Judge(plan, target, framework, units)
        self.every = Counter(key(e) for e in found)
        self.reuse = parsed_operations(plan, self.data)
        self.exact = self.judge.total() == self.every
        """The units reproduce the plan's violations (else every candidate is judged by a full run)."""
        self.verdicts: dict[str, tuple[Delta, Plan, Target, str] | None] = {}
        self.accepted: dict[str, bool] = {}

    def _judged(self, text: str, patch: list[dict[str, Any]]) -> tuple[Delta, Plan, Target, str] | None:
        if text not in self.verdicts:
            patched = candidate(self.plan, self.data, patch, self.reuse)
            target, framework = self.target, self.framework
            if patched is not None and patched.target != self.plan.target:  # another board: its facts judge it
                try:
                    target = load_target(patched.target or "")
                except UnknownTarget:
                    patched = None
                else:
                    framework = patched.framework or target.frameworks[0]
            elif patched is not None and patched.framework not in (None, self.data.get("framework")):
                framework = str(patched.framework)  # the relaxation switches framework: judge it under the new one
            if patched is None:
                self.verdicts[text] = None
            else:
                if target is self.target and framework == self.framework and self.exact:
                    delta = self.judge.delta(patched)
                else:
                    after = Counter(key(e) for e in self.rules(patched, target, framework))
                    delta = Delta(self.every, after, sum(after.values()))
                self.verdicts[text] = (delta, patched, target, framework)
        return self.verdicts[text]

    def validates(self, patch: list[dict[str, Any]], answered: Key) -> bool:
        """Whether ``patch`` repairs the violation it answers (``answered``) without introducing one the
        plan's other violations lack; a plan left with no violation at all must also satisfy ``accepts``."""
        text = json.dumps(patch, sort_keys=True, default=str)
        judged = self._judged(text, patch)
        if judged is None:
            return False
        delta, patched, target, framework = judged
        if not delta.keeps(self.every, answered):
            return False
        if delta.left or self.accepts is None:
            return True
        if text not in self.accepted:
            self.accepted[text] = self.accepts(patched, target, framework)
        return self.accepted[text]


def kept(
    plan: Plan,
    target: Target,
    framework: str,
    found: list[Evidence],
    rules: Checker,
    units: Units,
    accepts: Acceptor | None = None,
) -> list[Evidence]:
    """``found`` with only the relaxations that validate, at most ``MAX_OFFERED`` each, in the rules' order."""
    if not found or not any(e.relaxations for e in found):
        return found
    judged = _Candidates(plan, target, framework, found, rules, units, accepts)
    result = []
    for evidence in found:
        relaxations: list[Relaxation] = []
        for proposed in evidence.relaxations:
            if len(relaxations) == MAX_OFFERED:
                break
            try:
                relaxation = proposed.model_copy(update={"patch": authored(plan, proposed.patch)})
            except PatchError:
                continue
            if relaxation not in relaxations and judged.validates(relaxation.patch, key(evidence)):
                relaxations.append(relaxation)
        if relaxations != evidence.relaxations:
            evidence = evidence.model_copy(update={"relaxations": relaxations})
        result.append(evidence)
    return result
