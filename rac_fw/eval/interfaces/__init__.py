"""Interfaces: what an agent may submit for a domain's task, offered to the model as tools.

An interface names its tools (JSON Schemas the model's native tool calling uses), writes the task
prompt from the domain's observation, and judges one tool call with the domain's independent
verifier, returning a contract ``Feedback``. Besides the one tool that *proposes* (judged, one per model
call: see ``docs/INTERFACES.md``, "The proposal rule"), an interface may offer *lookup* tools that only
read (the rac interface's ``schema``, as over MCP): they are answered, never judged. It also states, for
the scripted agents of tests and calibration, a *reference* action (what the oracle submits; a
sequence for interfaces that build an answer over several turns) and a *flawed* one (the repairing
agent's first proposal, whose evidence carries the fix), and, where the domain has one, the *quality*
a passing proposal must also reach (scheduling: makespan ≤ 1.25 × the known optimum, which the model
never sees).

Interfaces are found by ``(domain, name)`` in a registry: the built-in ones register from the modules
listed in ``_BUILTIN``; another distribution (a new domain, e.g. PCB) adds its own through the
``rac_fw.interfaces`` entry-point group (``"pcb:coord" = "pkg.module:CoordInterface"``) or by calling
:func:`register_interface` when its module is imported.
"""

from __future__ import annotations

import importlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any, ClassVar

from rac_fw.contract import Feedback, Status
from rac_fw.eval.clients import ToolSpec

ENTRY_POINT_GROUP = "rac_fw.interfaces"

#: Modules that register the built-in interfaces when imported.
_BUILTIN = ("rac_fw.eval.interfaces.rac", "rac_fw.eval.interfaces.scheduling_code", "rac_fw.eval.interfaces.source",
            "rac_fw.eval.interfaces.pcb")

#: Largest tool-result text sent back to the model (evidence beyond it is cut, with a note).
MAX_RESULT_CHARS = 12_000


@dataclass(frozen=True)
class ScriptedAction:
    """A tool call a scripted agent makes: tool name and arguments."""

    tool: str
    arguments: dict[str, Any]


@dataclass
class Judged:
    """The verdict on one tool call; ``unknown`` when it could not be decided here (missing tool)."""

    feedback: Feedback
    unknown: bool = False

    @property
    def passed(self) -> bool:
        """The verifier accepted the proposal (its quality, where a domain has one, is judged apart)."""
        return self.feedback.status is Status.PASS and not self.unknown


@dataclass(frozen=True)
class Quality:
    """How good an accepted proposal is: ``passed`` when it reaches the task's quality bar, with the
    measurements behind it (stored per episode; never shown to the model)."""

    passed: bool
    metrics: dict[str, float] = field(default_factory=dict)


class EpisodeState(ABC):
    """Per-episode state an interface keeps between proposals (e.g. the runtime's Episode)."""

    @abstractmethod
    def judge(self, tool: str, arguments: dict[str, Any]) -> Judged:
        """Judge one well-formed tool call of this interface's tools."""


class Interface(ABC):
    """One way of posing a domain's tasks to a model (see the module docstring)."""

    domain: ClassVar[str]
    name: ClassVar[str]
    description: ClassVar[str]

    @abstractmethod
    def tasks(self) -> list[str]:
        """The tasks this interface can pose (a domain's calibrated tasks)."""

    @abstractmethod
    def tools(self, task: str) -> list[ToolSpec]: ...

    @abstractmethod
    def prompt(self, task: str) -> tuple[str, str]:
        """(system, user) messages that open an episode; the user message holds a ``task: ID`` line."""

    @abstractmethod
    def start(self, task: str, seed: int, budget: int) -> EpisodeState: ...

    @abstractmethod
    def reference(self, task: str) -> ScriptedAction: ...

    @abstractmethod
    def flawed(self, task: str) -> ScriptedAction: ...

    def reference_at(self, task: str, turn: int) -> ScriptedAction:
        """The oracle's proposal at ``turn`` (0-based): the reference, unless the interface builds its answer
        over several turns (PCB's sequential relations)."""
        return self.reference(task)

    def lookup_tools(self, task: str) -> list[ToolSpec]:
        """Tools that only read (answered, never judged, any number per reply); none by default."""
        return []

    def lookup(self, task: str, tool: str, arguments: dict[str, Any]) -> str:
        """The answer to one lookup call (a JSON text; problems are answered, never raised)."""
        return json.dumps({"error": f"no lookup tool {tool!r}"})

    def quality(self, task: str, feedback: Feedback) -> Quality | None:
        """The quality of an accepted proposal, for domains that define one (None: acceptance is the pass)."""
        return None

    def constraints(self, feedback: Feedback) -> tuple[int, int]:
        """(held, total) of the task's constraints on a judged proposal — the CPR's ingredients. By
        default every verdict of the verifier is a constraint."""
        return sum(v.passed for v in feedback.verdicts), len(feedback.verdicts)

    def labels(self, task: str) -> dict[str, str]:
        """Grouping labels for the report (``family``, ``target``)."""
        return {"family": self.domain, "target": "-"}

    def context_tokens(self, task: str) -> int:
        """o200k tokens of what the model is given before its first call (prompt + tool schemas)."""
        from rac_fw.metering import measure

        system, user = self.prompt(task)
        schemas = json.dumps([t.__dict__ for t in [*self.tools(task), *self.lookup_tools(task)]])
        return measure(system + user + schemas)[1]


def result_text(feedback: Feedback) -> str:
    """The tool result the model reads: status, failed verdicts, evidence with relaxations (compact)."""
    doc: dict[str, Any] = {
        "status": feedback.status.value,
        "turn": feedback.turn,
        "failed": [v.model_dump(mode="json", exclude_none=True) for v in feedback.verdicts if not v.passed],
        "evidence": [e.model_dump(mode="json", exclude_none=True, exclude_defaults=True) for e in feedback.evidence],
    }
    text = json.dumps(doc, separators=(",", ":"))
    while len(text) > MAX_RESULT_CHARS and doc["evidence"]:
        doc["evidence"] = doc["evidence"][:-1]
        doc["truncated"] = "further evidence omitted"
        text = json.dumps(doc, separators=(",", ":"))
    return text


_REGISTRY: dict[tuple[str, str], type[Interface]] = {}


def register_interface(cls: type[Interface]) -> type[Interface]:
    """Class decorator: make ``cls`` available as ``(cls.domain, cls.name)``."""
    _REGISTRY[(cls.domain, cls.name)] = cls
    return cls


@cache
def _load_all() -> None:
    for module in _BUILTIN:
        importlib.import_module(module)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        cls = ep.load()
        if isinstance(cls, type) and issubclass(cls, Interface):
            _REGISTRY[(cls.domain, cls.name)] = cls


def interfaces() -> dict[tuple[str, str], type[Interface]]:
    """Every registered interface by (domain, name)."""
    _load_all()
    return dict(sorted(_REGISTRY.items()))


class UnknownInterface(LookupError):
    def __init__(self, domain: str, name: str):
        known = ", ".join(f"{d}:{n}" for d, n in interfaces())
        super().__init__(f"no interface {name!r} for domain {domain!r}; registered: {known}")


def interfaces_of(domain: str) -> list[str]:
    """The names of the interfaces registered for ``domain`` (``rac`` first)."""
    names = [n for d, n in interfaces() if d == domain]
    return sorted(names, key=lambda n: (n != "rac", n))


def get_interface(domain: str, name: str) -> Interface:
    cls = interfaces().get((domain, name))
    if cls is None:
        raise UnknownInterface(domain, name)
    return cls()
