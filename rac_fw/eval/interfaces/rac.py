"""The RAC interface of each domain: the agent submits the domain's typed action; the turn runtime judges it.

One tool, ``submit_action``, whose parameters are the domain's action schema (``Domain.action_schema``).
Every proposal is one turn of a :class:`rac_fw.runtime.Episode`, so the eval sees exactly the
verdicts and evidence (with machine-applicable relaxations) the CLI and the MCP server give.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, ClassVar

from rac_fw.contract import Action
from rac_fw.domain import Domain, load_domain
from rac_fw.eval.clients import ToolSpec
from rac_fw.eval.interfaces import EpisodeState, Interface, Judged, ScriptedAction, register_interface
from rac_fw.runtime import Episode

TOOL = "submit_action"

SYSTEM = (
    "You solve one task by submitting a typed action with the tool `submit_action`. The action states "
    "intent as data (never code); a deterministic realizer builds the artifact and an independent "
    "verifier judges it. A failed proposal returns evidence with the objects in conflict, magnitudes and "
    "admissible relaxations (each with a JSON patch over your action): revise the action and submit "
    "again. You have a small budget of model calls; stop once the status is pass."
)


@cache
def _schema(domain: str) -> dict[str, Any]:
    """The domain's action schema, generated once per process (pydantic takes ~0.3 s for the plan's)."""
    return load_domain(domain).action_schema()


class RacState(EpisodeState):
    def __init__(self, domain: Domain, task: str, seed: int, budget: int):
        self.domain_name = domain.name
        self.episode = Episode(domain, task, budget=budget, seed=seed)

    def judge(self, tool: str, arguments: dict[str, Any]) -> Judged:
        action = Action(domain=self.domain_name, task=self.episode.task, payload=arguments)
        feedback = self.episode.submit(action)
        unknown = any(v.predicate == "undecided" for v in feedback.verdicts)
        return Judged(feedback, unknown)


class RacInterface(Interface):
    """The RAC interface over any registered domain."""

    name: ClassVar[str] = "rac"
    description: ClassVar[str] = "typed action (relations / plan) judged by the domain's verifier"

    @property
    def _domain(self) -> Domain:
        return load_domain(self.domain)

    def tasks(self) -> list[str]:
        return self._domain.tasks()

    def tools(self, task: str) -> list[ToolSpec]:
        return [ToolSpec(TOOL, f"Submit one {self.domain} action for the task (JSON matching the schema).",
                         _schema(self.domain))]

    def prompt(self, task: str) -> tuple[str, str]:
        obs = self._domain.observe(task)
        return SYSTEM, f"task: {task}\n{obs.summary}\nfacts: {json.dumps(obs.data, separators=(',', ':'))}"

    def start(self, task: str, seed: int, budget: int) -> EpisodeState:
        return RacState(self._domain, task, seed, budget)


@register_interface
class LogicRac(RacInterface):
    domain = "logic"

    def reference(self, task: str) -> ScriptedAction:
        from rac_fw.domains.logic.tasks import get_task

        t = get_task(task)
        outputs = {out: [row for row in range(t.rows) if t.expected(out, row)] for out in t.outputs}
        return ScriptedAction(TOOL, {"outputs": outputs})

    def flawed(self, task: str) -> ScriptedAction:
        """One output misses its first minterm: the verifier answers E_TRUTH_TABLE with the fix as a patch."""
        outputs = dict(self.reference(task).arguments["outputs"])
        first = next(out for out, rows in outputs.items() if rows)
        outputs[first] = outputs[first][1:]
        return ScriptedAction(TOOL, {"outputs": outputs})


@register_interface
class SchedulingRac(RacInterface):
    domain = "scheduling"

    def tasks(self) -> list[str]:
        from rac_fw.domains.scheduling.instance import LAWRENCE

        return list(LAWRENCE)

    def reference(self, task: str) -> ScriptedAction:
        from rac_fw.domains.scheduling.calibrate import control_payload

        jobs = int(self._domain.observe(task).data["num_jobs"])
        return ScriptedAction(TOOL, control_payload(jobs, "bounded"))

    def flawed(self, task: str) -> ScriptedAction:
        """A hard pair against job 0's own order: E_CYCLE with "drop pair 0" as the patch."""
        payload = dict(self.reference(task).arguments)
        payload["before"] = [["j0o1", "j0o0"]]
        return ScriptedAction(TOOL, payload)


@register_interface
class FirmwareRac(RacInterface):
    domain = "firmware"

    def tasks(self) -> list[str]:
        from rac_fw.domains.firmware.tasks import expressible

        return [t.id for t in expressible()]

    def _task(self, task: str) -> Any:
        from rac_fw.domains.firmware.tasks import get_task

        found = get_task(task)
        if found is None:
            raise LookupError(f"{task!r} is not a firmware suite task")
        return found

    def labels(self, task: str) -> dict[str, str]:
        t = self._task(task)
        return {"family": t.family, "target": f"{t.target}/{t.framework}"}

    def reference(self, task: str) -> ScriptedAction:
        return ScriptedAction(TOOL, self._task(task).reference_plan())

    def flawed(self, task: str) -> ScriptedAction:
        """The task's own flaw (its obligation broken, e.g. a DMA buffer in DTCM) when it names one, else
        the reference plan aimed at another chip (E_TARGET_MISMATCH, whose relaxation restores the target)."""
        from rac_fw.contract import apply_patch
        from rac_fw.domains.firmware.facts.load import target_ids

        found = self._task(task)
        plan = dict(self.reference(task).arguments)
        if found.flawed:
            return ScriptedAction(TOOL, apply_patch(plan, list(found.flawed)))
        plan["target"] = next(t for t in target_ids() if t != plan["target"])
        return ScriptedAction(TOOL, plan)
