"""The five-operation domain interface and the plugin registry.

A domain (logic, scheduling, firmware, …) implements exactly five operations: ``observe``,
``validate``, ``realize``, ``verify`` and ``feedback``. The runtime orders them; it never imports a
domain module directly — domains are discovered through the ``rac_fw.domains`` entry-point group, so
a separate distribution can add one by declaring::

    [project.entry-points."rac_fw.domains"]
    mydomain = "my_pkg.domain:MyDomain"

The same registration carries a domain's own front ends: :meth:`Domain.commands` lists the ``rac-fw``
commands it adds and :meth:`Domain.tools` the MCP tools beside the generic ones. The CLI and the MCP
server iterate the registered domains and never import a domain's modules themselves, so a domain
(built in or a separate distribution) brings its whole surface with the one entry point.

Loading a domain *class* is cheap by contract: the CLI imports every registered class to list its
commands on each start, so a domain module imports its action model (:class:`ModelRef`), solvers and
facts inside the methods that use them. A domain whose solvers ship in an extra of its distribution
names it (:attr:`Domain.install_extra`); :func:`domain_status` reports it unavailable, with its install line,
when that extra's requirements are not installed, and :func:`load_domain` refuses it the same way.
"""

from __future__ import annotations

import importlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import PackageNotFoundError, entry_points
from importlib.metadata import version as installed_version
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rac_fw.schemas import first_sentence, purpose, union_envelope, union_parts

if TYPE_CHECKING:
    from pydantic import BaseModel

    from rac_fw.contract import Action, Evidence, Feedback, Observation, Realization, Verdict
    from rac_fw.mcp.server import Tools

ENTRY_POINT_GROUP = "rac_fw.domains"


def load_ref(ref: str) -> Any:
    """The object a ``"package.module:attribute"`` reference names (the module imported on demand)."""
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class Command:
    """A ``rac-fw`` command a domain contributes: ``rac-fw NAME`` or, with ``group``, ``rac-fw GROUP NAME``.

    ``target`` names (``"package.module:attribute"``) a Typer command function (its annotated
    parameters are the options) or a ``typer.Typer`` holding a command group; it is imported only when
    the command runs or shows its own help, so listing the commands (``rac-fw --help``) imports no
    command module. ``summary`` is the line ``rac-fw --help`` shows; the target's docstring (or the
    group's help) is the command's own help. ``group`` names a group several domains share
    (``calibrate``). ``install_extra`` names the extra of the distribution the command needs beyond the
    core (a domain's commands need the domain's :attr:`Domain.install_extra` without saying so).
    """

    name: str
    target: str
    summary: str
    group: str | None = None
    install_extra: str | None = None

    @property
    def path(self) -> str:
        return f"{self.group} {self.name}" if self.group else self.name

    def load(self) -> Any:
        """The Typer function or app ``target`` names."""
        return load_ref(self.target)


class ModelRef:
    """A domain's action model named by reference and imported on first use (class attribute access),
    so importing the domain class does not build a large pydantic model (the firmware plan's union of
    every operation) that listing commands never needs."""

    def __init__(self, ref: str):
        self.ref = ref

    def __get__(self, instance: object, owner: type) -> type[BaseModel]:
        return cast("type[BaseModel]", load_ref(self.ref))


def model_ref(ref: str) -> Any:
    """``action_model = model_ref("pkg.module:Model")``: the model, imported when first read (typed as
    the model class it yields, which is what every reader of ``action_model`` sees)."""
    return ModelRef(ref)


@dataclass(frozen=True)
class Tool:
    """An MCP tool a domain contributes: ``fn``'s annotated parameters become the input schema; its
    failures are turned into evidence by the server's tool boundary like every other tool's."""

    name: str
    fn: Callable[..., dict[str, Any]]
    description: str


@dataclass
class Validation:
    """Result of ``validate``: the typed action when valid, otherwise every violation found."""

    action: Any | None
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.action is not None and not self.evidence


@dataclass
class Verification:
    """Result of ``verify``: one verdict per predicate and evidence for each failed one."""

    verdicts: list[Verdict]
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(v.passed for v in self.verdicts) and not self.evidence


class UnknownTask(LookupError):
    """Raised by a domain when asked for a task it does not have."""

    def __init__(self, domain: str, task: str, known: list[str]):
        self.domain, self.task, self.known = domain, task, known
        shown = ", ".join(known[:12]) + (" …" if len(known) > 12 else "")
        super().__init__(f"unknown task {task!r} in domain {domain!r}; known: {shown}")

    def __reduce__(self) -> tuple[Any, ...]:  # crosses the MCP server's worker boundary intact
        return (type(self), (self.domain, self.task, self.known))


class Domain(ABC):
    """A domain plugin. Subclasses set ``name`` and ``action_model`` and implement the five operations.

    ``tasks()`` and ``action_schema()`` are catalogue queries (what exists, what an action looks like);
    they are not part of a turn.
    """

    name: ClassVar[str]
    action_model: ClassVar[type[BaseModel]]
    #: The extra of the domain's distribution that holds its solvers (``pip install 'rac-fw[pcb]'``);
    #: None when the distribution's own requirements are all it needs.
    install_extra: ClassVar[str | None] = None

    @abstractmethod
    def tasks(self) -> list[str]:
        """Identifiers of the tasks this domain offers."""

    def task_summary(self, task: str) -> str | None:
        """One line that ``rac-fw tasks`` prints beside a task's name (its size, its suite), or None."""
        return None

    def action_schema(self) -> dict[str, Any]:
        """JSON Schema of the action payload: what an agent's tool definition needs."""
        return self.action_model.model_json_schema()

    def message_models(self) -> dict[str, type[BaseModel]]:
        """Further documents this domain publishes (``rac-fw schema NAME``), e.g. a command's report."""
        return {}

    def schema_index(self) -> dict[str, Any]:
        """A compact guide to the action (``rac-fw schema NAME --index``): for an action built from tagged
        variants (a PCB relation), one purpose line per variant; otherwise the full schema. A domain whose
        action language needs more (firmware: where each operation is realized) overrides it."""
        parts = union_parts(self.action_schema())
        if not parts:
            return self.action_schema()
        return {"parts": {tag: purpose(first_sentence(s.get("description"), tag)) for tag, s in parts.items()}}

    def tool_schema(self) -> dict[str, Any]:
        """The payload schema a tool definition carries (``submit_<domain>``): the action schema with each
        tagged variant reduced to its tag, the variants' fields being served by :meth:`part_schema`."""
        return union_envelope(self.action_schema(), f"fields: schema(name={self.name!r}, op=TAG)")

    def part_schema(self, part: str) -> dict[str, Any]:
        """The schema of one named part of the action (a PCB relation kind, a firmware operation);
        LookupError if none."""
        parts = union_parts(self.action_schema())
        if part in parts:
            return parts[part]
        if not parts:
            raise LookupError(f"the {self.name} action has no named parts: `rac-fw schema {self.name}` is all of it")
        raise LookupError(f"the {self.name} action has no part {part!r}; known: {', '.join(parts)}")

    # --- extension points: the domain's own front ends ----------------------------------------
    @classmethod
    def commands(cls) -> list[Command]:
        """The ``rac-fw`` commands this domain adds (a class method: the CLI lists them without
        instantiating the domain). Import command modules here, not at module level, so loading the
        domain class stays cheap."""
        return []

    def tools(self, host: Tools) -> list[Tool]:
        """The MCP tools this domain serves beside the generic ones (``start_episode``, ``submit`` …):
        by default its ``submit_<domain>`` (built by ``host`` from :meth:`tool_schema`); a domain adds its
        own after it. ``host`` gives the calling connection's sessions and the operator's settings."""
        return [host.submit_tool(self)]

    def warm(self) -> None:  # noqa: B027  (an optional hook: most domains need nothing)
        """Load what a turn needs (lazily imported modules, fact caches). The MCP server calls it once in
        the process its bounded turn workers are forked from, so each turn starts warm."""

    # --- the five operations -------------------------------------------------------------------
    @abstractmethod
    def observe(self, task: str, detail: str | None = None) -> Observation:
        """The facts an agent plans against (``detail`` asks for depth on one named object)."""

    @abstractmethod
    def validate(self, task: str, action: Action) -> Validation:
        """Type- and fact-check the action; return all violations at once as located evidence."""

    @abstractmethod
    def realize(self, task: str, action: Any, seed: int) -> Realization:
        """Deterministically turn a validated action into an artifact plus a receipt."""

    @abstractmethod
    def verify(self, task: str, action: Any, realization: Realization) -> Verification:
        """Judge the artifact independently of the realizer (never trust the receipt)."""

    def feedback(self, task: str, validation: Validation, verification: Verification | None) -> Feedback:
        """Turn verdicts and evidence into the message the agent reads next.

        The default returns status, verdicts, evidence and the next observation; domains may add more.
        """
        from rac_fw.contract import Feedback, Status

        if not validation.ok:
            status, verdicts, evidence = Status.INVALID, [], validation.evidence
        else:
            assert verification is not None
            status = Status.PASS if verification.ok else Status.FAIL
            verdicts, evidence = verification.verdicts, verification.evidence
        return Feedback(
            domain=self.name,
            task=task,
            status=status,
            verdicts=verdicts,
            evidence=evidence,
            observation=None if status is Status.PASS else self.observe(task),
        )


class UnknownDomain(LookupError):
    def __init__(self, name: str, known: list[str]):
        self.name, self.known = name, known
        super().__init__(f"unknown domain {name!r}; registered: {', '.join(known) or 'none'}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.known))


@cache
def _registry() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def domain_names() -> list[str]:
    """Names of every domain registered through the ``rac_fw.domains`` entry points."""
    return sorted(_registry())


def domain_class(name: str) -> type[Domain]:
    """The class a registered domain's entry point names (imported, not instantiated)."""
    registry = _registry()
    if name not in registry:
        raise UnknownDomain(name, sorted(registry))
    cls = registry[name].load()
    if not (isinstance(cls, type) and issubclass(cls, Domain)):
        raise TypeError(f"entry point {name!r} does not name a Domain subclass: {cls!r}")
    return cast("type[Domain]", cls)


@cache
def missing_requirements(distribution: str, extra: str) -> tuple[str, ...]:
    """The requirements ``distribution`` declares for ``extra`` that are not installed. Presence is what
    is checked (pip enforced the versions when it installed them); an extra the installed metadata does
    not declare needs nothing. Read from the metadata with a pattern, not a requirements parser, because
    every ``rac-fw`` start asks (``rac-fw --help`` marks the commands of a missing extra); once per
    process (what is installed does not change under a running command)."""
    from importlib.metadata import requires

    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    missing = []
    for line in requires(distribution) or []:
        requirement, _, condition = line.partition(";")
        name = _REQUIREMENT_NAME.match(requirement.strip())
        if name is None or not marker.search(condition) or name.group(0) == distribution:
            continue
        try:
            installed_version(name.group(0))
        except PackageNotFoundError:
            missing.append(name.group(0))
    return tuple(missing)


_REQUIREMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class DomainStatus:
    """Whether a registered domain can be used here and, if not, why and how to add it."""

    name: str
    install: str | None = None
    """The command that installs what is missing (``pip install 'rac-fw[scheduling]'``)."""
    missing: tuple[str, ...] = ()
    error: str | None = None
    """The domain class could not be imported at all (a broken plugin): the error."""

    @property
    def available(self) -> bool:
        return self.install is None and self.error is None


def domain_status(name: str) -> DomainStatus:
    """Availability of a registered domain: its class imports and its :attr:`Domain.install_extra` (if any) is
    installed. Never raises for a registered name (a broken plugin reports its error)."""
    entry = _registry().get(name)
    if entry is None:
        raise UnknownDomain(name, domain_names())
    try:
        cls = domain_class(name)
    except Exception as exc:  # a broken third-party plugin must not hide the others
        return DomainStatus(name, error=f"{type(exc).__name__}: {exc}")
    extra = cls.install_extra
    if extra is None or entry.dist is None:
        return DomainStatus(name)
    missing = missing_requirements(entry.dist.name, extra)
    if not missing:
        return DomainStatus(name)
    return DomainStatus(name, install=f"pip install '{entry.dist.name}[{extra}]'", missing=missing)


class DomainUnavailable(LookupError):
    """A registered domain whose extra is not installed; the message carries the install line."""

    def __init__(self, name: str, install: str, missing: tuple[str, ...] = ()):
        self.name, self.install, self.missing = name, install, missing
        needs = f" (missing: {', '.join(missing)})" if missing else ""
        super().__init__(f"the {name} domain is not installed here{needs}: {install}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.install, self.missing))


@cache
def load_domain(name: str) -> Domain:
    """Instantiate a registered domain by name (cached: domains hold only read-only facts). Raises
    :class:`UnknownDomain` for a name nobody registered and :class:`DomainUnavailable` for a domain
    whose extra is missing."""
    status = domain_status(name)
    if status.install is not None:
        raise DomainUnavailable(name, status.install, status.missing)
    return domain_class(name)()


def available_domains() -> list[str]:
    """The registered domains that can be loaded here (see :func:`domain_status`)."""
    return [name for name in domain_names() if domain_status(name).available]


def schema_for(name: str, part: str | None = None, index: bool = False) -> dict[str, Any]:
    """The JSON Schema behind ``rac-fw schema NAME``: a contract message (feedback, observation, action),
    a domain's action payload (or its ``index``, or one ``part`` of it such as a firmware operation),
    or a document a domain publishes (e.g. firmware's ``plan-result``)."""
    from rac_fw.contract import MESSAGES

    if name in MESSAGES and part is None and not index:
        return MESSAGES[name].model_json_schema()
    names = domain_names()
    if name in names:
        plugin = load_domain(name)
        if part is not None:
            return plugin.part_schema(part)
        return plugin.schema_index() if index else plugin.action_schema()
    if part is not None or index:
        raise LookupError(f"--op and --index apply to a domain's action; {name!r} is not a domain")
    published: list[str] = []
    for domain in available_domains():
        models = load_domain(domain).message_models()
        if name in models:
            return models[name].model_json_schema()
        published += models
    raise LookupError(f"no schema named {name!r}; known: {', '.join(sorted([*MESSAGES, *names, *published]))}")
