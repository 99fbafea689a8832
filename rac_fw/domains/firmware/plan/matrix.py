"""The support matrix (operation × framework × target), computed from the op specs.

One answer to "can framework F realize operation K on target T": the target's pack lists F, K's
spec has a realization for F, and that realization's ``available`` predicate holds for T's facts.
The schema, ``rac-fw targets show``, the E_TARGET_UNSUPPORTED obligation and every lowering ask
this module; none keeps its own list.
"""

from __future__ import annotations

from rac_fw.domains.firmware.facts.memo import per_target
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.plan.registry import spec, specs


def realizes(framework: str, kind: str, target: Target, feature: str | None = None) -> bool:
    """Whether ``framework`` realizes operation ``kind`` (and, if given, its ``feature``) on ``target``."""
    return _realizes(target, framework, kind, feature)


@per_target
def _realizes(target: Target, framework: str, kind: str, feature: str | None) -> bool:
    if framework not in target.frameworks:
        return False
    try:
        realization = spec(kind).realization(framework)
    except KeyError:
        return False
    if realization is None or not realization.available(target):
        return False
    if feature is None:
        return True
    check = realization.features.get(feature)
    return check is not None and check(target)


def elsewhere(kind: str, target: Target, feature: str | None = None) -> list[tuple[str, str]]:
    """``(target id, framework)`` of the other shipped targets realizing ``kind`` (its ``feature``), each
    target once with its first such framework, in target order: where a plan using it can go instead."""
    from rac_fw.domains.firmware.facts.load import load_target, target_ids

    found = []
    for other in target_ids():
        if other == target.id:
            continue
        facts = load_target(other)
        fit = next((f for f in facts.frameworks if realizes(f, kind, facts, feature)), None)
        if fit is not None:
            found.append((other, fit))
    return found


def frameworks_for(kind: str, target: Target) -> list[str]:
    """The target's frameworks (in the pack's order) that realize ``kind``."""
    return [f for f in target.frameworks if realizes(f, kind, target)]


def table(target: Target) -> dict[str, list[str]]:
    """Operation kind → frameworks realizing it on ``target`` (kinds no framework realizes are omitted)."""
    rows = {s.kind: frameworks_for(s.kind, target) for s in specs()}
    return {kind: frameworks for kind, frameworks in rows.items() if frameworks}


def all_frameworks() -> list[str]:
    """Every framework some op spec has a realization for, in first-seen catalog order."""
    seen: dict[str, None] = {}
    for s in specs():
        for framework in s.realizations:
            seen.setdefault(framework, None)
    return list(seen)
