"""Scheduling C1T: the agent writes one Python program; it runs sandboxed and the same verifier judges it.

The tool ``submit_program`` takes the program's source. :func:`rac_fw.domains.scheduling.code.run_code`
runs it under the sandbox (no network, resource limits, wall clock) with the instance on stdin, and
judges its relations or timetable with the scheduling verifier — the comparison with the RAC interface
is on equal terms: one program, one sandbox run, per proposal (the episode judges at most one proposal
per model call), and the same quality bar (:mod:`.makespan`).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rac_fw.contract import Feedback
from rac_fw.domain import load_domain
from rac_fw.eval.clients import ToolSpec
from rac_fw.eval.interfaces import EpisodeState, Interface, Judged, Quality, ScriptedAction, register_interface
from rac_fw.eval.interfaces.makespan import makespan_quality

TOOL = "submit_program"

SYSTEM = (
    "You solve one job-shop scheduling task by writing a complete Python 3 program and submitting it with "
    "`submit_program`. The program reads the instance as JSON on stdin and prints, as its last stdout line, "
    'one JSON object: either relations {"priority": [job order], "before": [[op, op], ...]} or a timetable '
    '{"starts": {"j0o0": 0, ...}}. It runs sandboxed (no network, no files, time and memory limits). '
    "An independent verifier judges the schedule; fix the program from its evidence and resubmit."
)

_REFERENCE = """import json, sys
data = json.load(sys.stdin)
print(json.dumps({"priority": list(range(data["num_jobs"])), "before": []}))
"""

_FLAWED = """import json, sys
data = json.load(sys.stdin)
# every operation at time 0: machines overlap and job order is broken
print(json.dumps({"starts": {f"j{j}o{o}": 0 for j, job in enumerate(data["jobs"]) for o in range(len(job))}}))
"""


class CodeState(EpisodeState):
    def __init__(self, task: str, seed: int):
        self.task, self.seed, self.turn = task, seed, 0

    def judge(self, tool: str, arguments: dict[str, Any]) -> Judged:
        from rac_fw.domains.scheduling.code import run_code
        from rac_fw.domains.scheduling.domain import SchedulingDomain

        source = arguments.get("source")
        self.turn += 1
        domain = load_domain("scheduling")
        assert isinstance(domain, SchedulingDomain)
        feedback = run_code(domain, self.task, source if isinstance(source, str) else "", seed=self.seed)
        feedback.turn = self.turn
        return Judged(feedback)


@register_interface
class SchedulingCode(Interface):
    domain: ClassVar[str] = "scheduling"
    name: ClassVar[str] = "c1t"
    description: ClassVar[str] = "a sandboxed Python program judged by the scheduling verifier"

    def tasks(self) -> list[str]:
        from rac_fw.domains.scheduling.instance import LAWRENCE

        return list(LAWRENCE)

    def tools(self, task: str) -> list[ToolSpec]:
        return [ToolSpec(TOOL, "Submit the complete Python program.", {
            "type": "object", "required": ["source"], "additionalProperties": False,
            "properties": {"source": {"type": "string", "description": "Python 3 source"}}})]

    def prompt(self, task: str) -> tuple[str, str]:
        from rac_fw.domains.scheduling.code import program_input
        from rac_fw.domains.scheduling.domain import SchedulingDomain

        domain = load_domain("scheduling")
        assert isinstance(domain, SchedulingDomain)
        stdin = json.dumps(program_input(domain, task), separators=(",", ":"))
        return SYSTEM, f"task: {task}\nMinimise the makespan. The program's stdin will be:\n{stdin}"

    def start(self, task: str, seed: int, budget: int) -> EpisodeState:
        return CodeState(task, seed)

    def quality(self, task: str, feedback: Feedback) -> Quality | None:
        return makespan_quality(task, feedback)

    def reference(self, task: str) -> ScriptedAction:
        return ScriptedAction(TOOL, {"source": _REFERENCE})

    def flawed(self, task: str) -> ScriptedAction:
        return ScriptedAction(TOOL, {"source": _FLAWED})
