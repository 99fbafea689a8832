"""PCB in the evaluation: the relational interface and the paper's five baselines on the same tasks.

Every interface here is posed on the ``pcb`` domain's tasks, with the same budget (model calls) and the
same verifier (the DRC plus the task's requirements, :func:`rac_fw.domains.pcb.verify.check_board`):

* ``rac`` — relations over named parts, pins, nets and regions (the ``pcb`` plugin);
* ``coord`` — part positions, tracks and vias in millimetres (``pcb_coord``);
* ``coord_py`` — a sandboxed Python program printing a ``coord`` payload (``pcb_coord_py``);
* ``candidates`` — pick one of the toolchain's relation-blind layouts (``pcb_candidates``);
* ``seq`` — one new relation per call on top of the ones already stated (``pcb_seq``);
* ``req`` — only say which of the task's requirements to honour (``pcb_req``).

Each is the RAC interface machinery over the baseline's own domain plugin (its action schema as the
tool, its observation — which states its own action format — as the prompt); the scripted policies come
from :func:`rac_fw.domains.pcb.baselines.reference_policy`.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any, ClassVar

from rac_fw.contract import Feedback
from rac_fw.eval.interfaces import ScriptedAction, register_interface
from rac_fw.eval.interfaces.rac import TOOL, RacInterface


@cache
def _policy(plugin: str, task: str) -> tuple[dict[str, Any], ...]:
    from rac_fw.domains.pcb.baselines import reference_policy

    return tuple(reference_policy(plugin, task))


@cache
def _passing_candidate(task: str) -> int:
    """The first of the toolchain's candidates the verifier accepts (0 when none does)."""
    from rac_fw.contract import Action
    from rac_fw.domain import load_domain

    domain = load_domain("pcb_candidates")
    for index in range(len(_policy("pcb_candidates", task))):
        checked = domain.validate(task, Action(domain=domain.name, task=task, payload={"choice": index}))
        if checked.action is not None and domain.verify(task, checked.action,
                                                        domain.realize(task, checked.action, 0)).ok:
            return index
    return 0


class PcbInterface(RacInterface):
    """One interface on the PCB tasks (see the module docstring)."""

    domain: ClassVar[str] = "pcb"

    def labels(self, task: str) -> dict[str, str]:
        from rac_fw.domains.pcb.tasks import get_task

        return {"family": get_task(task).category, "target": "-"}

    def constraints(self, feedback: Feedback) -> tuple[int, int]:
        """The task's requirements are the constraints (the DRC verdicts hold on every board alike)."""
        required = [v for v in feedback.verdicts if v.predicate.startswith("requirements[")]
        chosen = required or feedback.verdicts
        return sum(v.passed for v in chosen), len(chosen)

    def reference(self, task: str) -> ScriptedAction:
        return ScriptedAction(TOOL, _policy(self.plugin or self.domain, task)[0])

    def reference_at(self, task: str, turn: int) -> ScriptedAction:
        policy = _policy(self.plugin or self.domain, task)
        return ScriptedAction(TOOL, policy[min(turn, len(policy) - 1)])


@register_interface
class PcbRac(PcbInterface):
    name = "rac"

    def flawed(self, task: str) -> ScriptedAction:
        """The reference bundle plus a relation on a part the board does not have (repair tasks: their own
        infeasible start bundle)."""
        from rac_fw.domains.pcb.tasks import get_task

        t = get_task(task)
        if t.start is not None:
            return ScriptedAction(TOOL, copy.deepcopy(t.start))
        bundle = copy.deepcopy(t.reference)
        bundle["relations"] = [*bundle["relations"],
                               {"kind": "board_edge", "ref": "NO_SUCH_PART", "side": "left", "distance": "close"}]
        return ScriptedAction(TOOL, bundle)


@register_interface
class PcbCoord(PcbInterface):
    name = "coord"
    plugin = "pcb_coord"
    description = "part positions, tracks and vias in millimetres"

    def flawed(self, task: str) -> ScriptedAction:
        """The reference layout with every part shifted 0.5 mm right (a fixed part moved, or copper that no
        longer meets its pads)."""
        layout = copy.deepcopy(self.reference(task).arguments)
        for placement in layout.get("placements", {}).values():
            placement["x"] += 0.5
        return ScriptedAction(TOOL, layout)


@register_interface
class PcbCoordPy(PcbInterface):
    name = "coord_py"
    plugin = "pcb_coord_py"
    description = "a sandboxed Python program printing coordinates"

    def flawed(self, task: str) -> ScriptedAction:
        return ScriptedAction(TOOL, {"program": "import sys\nsys.exit(3)\n"})


@register_interface
class PcbCandidates(PcbInterface):
    name = "candidates"
    plugin = "pcb_candidates"
    description = "pick one of the toolchain's relation-blind layouts"

    def reference(self, task: str) -> ScriptedAction:
        return ScriptedAction(TOOL, {"choice": _passing_candidate(task)})

    def reference_at(self, task: str, turn: int) -> ScriptedAction:
        return self.reference(task)

    def flawed(self, task: str) -> ScriptedAction:
        return ScriptedAction(TOOL, {"choice": len(_policy("pcb_candidates", task))})


@register_interface
class PcbSeq(PcbInterface):
    name = "seq"
    plugin = "pcb_seq"
    description = "one relation per call on top of the ones already stated"

    def flawed(self, task: str) -> ScriptedAction:
        first = copy.deepcopy(_policy("pcb_seq", task)[0])
        first["relation"] = {**first["relation"], "kind": "no_such_relation"}
        return ScriptedAction(TOOL, first)


@register_interface
class PcbReq(PcbInterface):
    name = "req"
    plugin = "pcb_req"
    description = "choose which of the task's requirements to honour"

    def flawed(self, task: str) -> ScriptedAction:
        return ScriptedAction(TOOL, {"requirements": [999]})
