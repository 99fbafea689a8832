"""The RAC interface of each domain: the agent submits the domain's typed action; the turn runtime judges it.

The tools are the ones an agent gets over MCP: ``submit_action``, whose parameters are the domain's
*tool* schema (``Domain.tool_schema``: for a large action language such as the firmware plan, an
envelope whose parts are listed by the index in the tool's description), and, when the action has parts,
the lookup tool ``schema`` answering one part's full schema (``Domain.part_schema``) — never the whole
181 k-character plan schema in every call. Every proposal is one turn of a :class:`rac_fw.runtime.Episode`,
so the eval sees exactly the verdicts and evidence (with machine-applicable relaxations) the CLI and the
MCP server give.
"""

from __future__ import annotations

import inspect
import json
from functools import cache
from typing import Any, ClassVar

from rac_fw.contract import Action, Feedback
from rac_fw.domain import Domain, load_domain
from rac_fw.eval.clients import ToolSpec
from rac_fw.eval.interfaces import EpisodeState, Interface, Judged, Quality, ScriptedAction, register_interface
from rac_fw.eval.interfaces.makespan import makespan_quality
from rac_fw.runtime import Episode
from rac_fw.schemas import inline_refs

TOOL = "submit_action"
LOOKUP = "schema"

SYSTEM = (
    "You solve one task by submitting a typed action with the tool `submit_action`. The action states "
    "intent as data (never code); a deterministic realizer builds the artifact and an independent "
    "verifier judges it. A failed proposal returns evidence with the objects in conflict, magnitudes and "
    "admissible relaxations (each with a JSON patch over your action): revise the action and submit "
    "again. You have a small budget of model calls; stop once the status is pass."
)


@cache
def _tools(domain: str) -> tuple[ToolSpec, ...]:
    """The submit tool (tool schema, description with the index when the action has parts) and, for an
    action with parts, the lookup tool; built once per process (pydantic takes ~0.3 s for the plan)."""
    dom = load_domain(domain)
    schema = inline_refs(dom.tool_schema())
    schema.pop("description", None)
    description = f"Submit one {domain} action for the task. " + inspect.cleandoc(dom.action_model.__doc__ or "")
    description = description.strip()
    index = dom.schema_index()
    if index == dom.action_schema():
        return (ToolSpec(TOOL, description, schema),)
    description += (f" Index of the action's parts (the `{LOOKUP}` tool gives one part's fields): "
                    + json.dumps(index, separators=(",", ":"), ensure_ascii=False))
    lookup = ToolSpec(LOOKUP, "The full JSON Schema of one part of the action (`part` or `op`: a name from the "
                      "index). Reading it is not a proposal.", {
                          "type": "object", "additionalProperties": False,
                          "properties": {"part": {"type": "string"}, "op": {"type": "string"},
                                         "name": {"type": "string", "description": "the domain (optional)"}}})
    return ToolSpec(TOOL, description, schema), lookup


class RacState(EpisodeState):
    """One runtime episode: each proposal is one turn (the runtime's own proposal budget equals the model
    calls, so it is never what ends an episode: the proposal rule admits one proposal per call)."""

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
    plugin: ClassVar[str | None] = None
    """The domain plugin whose action is submitted, when it is not ``domain`` itself (a PCB baseline is a
    plugin of its own, posed on the ``pcb`` tasks)."""

    @property
    def _domain(self) -> Domain:
        return load_domain(self.plugin or self.domain)

    def tasks(self) -> list[str]:
        return self._domain.tasks()

    def tools(self, task: str) -> list[ToolSpec]:
        return [_tools(self.plugin or self.domain)[0]]

    def lookup_tools(self, task: str) -> list[ToolSpec]:
        return list(_tools(self.plugin or self.domain)[1:])

    def lookup(self, task: str, tool: str, arguments: dict[str, Any]) -> str:
        part = arguments.get("part", arguments.get("op"))
        if tool != LOOKUP or not self.lookup_tools(task):
            return super().lookup(task, tool, arguments)
        if not isinstance(part, str):
            return json.dumps({"error": "`part` must be a name from the index"})
        try:
            return json.dumps(self._domain.part_schema(part), separators=(",", ":"))
        except LookupError as exc:
            return json.dumps({"error": str(exc)})

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

    def quality(self, task: str, feedback: Feedback) -> Quality | None:
        return makespan_quality(task, feedback)

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
