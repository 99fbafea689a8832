"""The checks Φ of a firmware task: predicates over the artifact's files alone.

They judge what any producer wrote (a lowering, a model, a person) and know nothing of plans: a check
names the behaviour the requirement demands in each framework's own vocabulary (the calls that must be
there, the strings the console must print, the configuration lines, patterns in devicetree or linker
files). Static checks run everywhere; compiling and running in QEMU are done by
:mod:`rac_fw.domains.firmware.tasks.judge` where the tools are present, which also judges the ``trace``
kind: the run's console against the trace the task's reference plan predicts, line for line.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from rac_fw.contract import Evidence

_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_C_FILES = (".c", ".h", ".cpp")


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid")

    why: str = Field(default="", max_length=200, description="What the check stands for in the requirement.")
    frameworks: list[str] | None = Field(default=None, description="Only in these frameworks (None: every one).")
    targets: list[str] | None = Field(default=None, description="Only on these targets (None: every one).")

    def applies(self, framework: str, target: str | None) -> bool:
        return (self.frameworks is None or framework in self.frameworks) and (
            self.targets is None or target is None or target in self.targets)


class Calls(_Check):
    """Every group must be called somewhere: one of its names (framework → names; absent = no demand)."""

    kind: Literal["calls"]
    any: dict[str, list[str]]


class NotCalls(_Check):
    """None of these may be called (framework → names)."""

    kind: Literal["not_calls"]
    names: dict[str, list[str]]


class CString(_Check):
    """A C string literal contains ``text`` (what the console must print)."""

    kind: Literal["string"]
    text: str = Field(min_length=1, max_length=120)


class Pattern(_Check):
    """A regex matches (or, with ``absent``, matches nowhere) in the files matching ``files``."""

    kind: Literal["pattern"]
    files: str = Field(description="Glob over artifact-relative paths, e.g. 'boards/*.overlay'.")
    regex: str
    absent: bool = False


class Trace(_Check):
    """The run's console trace matches the reference plan's predicted trace, line for line (judged by running,
    :mod:`rac_fw.domains.firmware.tasks.trace`, where a runner exists for the cell)."""

    kind: Literal["trace"]


Check = Annotated[Calls | NotCalls | CString | Pattern | Trace, Field(discriminator="kind")]

#: Kinds judged by running the artifact, not by reading it.
DYNAMIC_KINDS = frozenset({"trace"})


def _c_sources(files: dict[str, str]) -> dict[str, str]:
    return {p: _COMMENTS.sub(" ", t) for p, t in files.items() if p.endswith(_C_FILES)}


def _called(name: str, sources: dict[str, str]) -> str | None:
    pattern = re.compile(rf"(?<![\w.>]){re.escape(name)}\s*\(")
    return next((path for path, text in sources.items() if pattern.search(text)), None)


def judge_static(check: Check, files: dict[str, str], framework: str) -> list[Evidence]:
    """The evidence against ``files`` for one check (empty when it holds)."""
    sources = _c_sources(files)
    why = f" ({check.why})" if check.why else ""
    if isinstance(check, Calls):
        names = check.any.get(framework)
        if not names or any(_called(n, sources) for n in names):
            return []
        return [Evidence(code="E_TASK_CALL_MISSING", objects=list(names),
                         message=f"the sources call none of {', '.join(names)}{why}")]
    if isinstance(check, NotCalls):
        found = [(n, p) for n in check.names.get(framework, []) if (p := _called(n, sources))]
        return [Evidence(code="E_TASK_CALL_FORBIDDEN", location=p, objects=[n],
                         message=f"{p} calls {n}{why}") for n, p in found]
    if isinstance(check, Trace):
        return []  # judged by running (tasks/judge.py)
    if isinstance(check, CString):
        literal = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
        if any(check.text in m.group(1) for t in sources.values() for m in literal.finditer(t)):
            return []
        return [Evidence(code="E_TASK_STRING_MISSING", objects=[check.text],
                         message=f"no C string literal contains {check.text!r}{why}")]
    regex = re.compile(check.regex, re.M)
    chosen = {p: t for p, t in files.items() if fnmatch.fnmatch(p, check.files)}
    hits = [p for p, t in chosen.items() if regex.search(t)]
    if check.absent and hits:
        return [Evidence(code="E_TASK_PATTERN_PRESENT", location=hits[0], objects=hits,
                         message=f"{hits[0]} matches /{check.regex}/, which the requirement rules out{why}")]
    if not check.absent and not hits:
        return [Evidence(code="E_TASK_PATTERN_MISSING", location=check.files, objects=sorted(chosen),
                         message=f"no file matching {check.files!r} matches /{check.regex}/{why}")]
    return []
