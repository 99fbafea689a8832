"""The checks Φ of a firmware task: the behaviour the requirement demands, judged on the artifact alone.

They judge what any producer wrote (a lowering, a model, a person) and know nothing of plans. Static
checks are built on the C model (:mod:`rac_fw.domains.firmware.verify.static.flow`): a call counts only
when the program can make it — reachable from ``main``, a thread, a callback or an interrupt handler, on
a live path — never because its name appears in a comment, a string literal, an ``if (0)`` block, after a
``return`` or in a function nothing calls. The kinds:

* ``calls`` — for each framework, one of the listed calls is made; a call may constrain its arguments,
  ``HAL_DMA_Start_IT(_, size>=1024, size>=1024, >=256)`` (``_`` any; ``>=N``, ``<=N``, ``==N``, ``!=N``,
  ``>N``, ``<N`` or ``N``: the argument's constant value; ``size…``: the bytes of the object it names;
  ``"text"``: a string literal containing ``text``; ``/regex/``: the argument as written, for values the
  SDK spells as macros such as ``K_MSEC(10)``), and ``after`` names calls — patterns too, where ``@N``
  means "the object argument N of the checked call names" — one of which must have been made on *every*
  path before it (``SCB_CleanDCache_by_Addr(@2)`` before ``HAL_DMA_Start_IT``: the source, not any buffer);
* ``not_calls`` — none of these calls is made;
* ``field`` — a field of that name is set in live code (designated initializer or assignment) to a value
  meeting ``value`` (``.block_size = 1024U``);
* ``string`` — a string literal in live code contains ``text`` (what the console must print);
* ``pattern`` — a regex matches (or, with ``absent``, matches nowhere) in the files matching ``files``
  (configuration, devicetree, linker script; comments in C files are ignored);
* ``trace`` — judged by running the artifact (:mod:`.judge`): the run's console trace matches the trace
  the reference plan's receipt predicts (``predicted_trace``), where a runner exists for the cell.

The console lines a behaviour lists (``console:``) are judged by running too. Static checks run
everywhere.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.static.flow import Flow, Reached, occurrence
from rac_fw.domains.firmware.verify.static.model import Call, object_key

_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_C_FILES = (".c", ".h", ".cpp")
_PATTERN = re.compile(r"^([A-Za-z_]\w*)\s*(?:\((.*)\))?$")
_SPEC = re.compile(r'^(?:(_)|(size)?\s*(>=|<=|==|!=|>|<)?\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))|"([^"]*)"|/(.+)/|@(\d+))$')


@dataclass(frozen=True)
class Spec:
    """One argument constraint of a call pattern (see the module docstring)."""

    text: str
    op: str | None = None
    number: int | None = None
    size: bool = False
    literal: str | None = None
    regex: str | None = None
    same: int | None = None
    """``@N`` (in ``after`` patterns): names the same object as argument N of the call being checked."""

    @classmethod
    def parse(cls, text: str) -> Spec:
        match = _SPEC.match(text.strip())
        if match is None:
            raise ValueError(f"argument constraint {text!r}: use _, >=N, <=N, ==N, !=N, >N, <N, N, size>=N, "
                             "\"text\", /regex/ or @N")
        any_, size, op, number, literal, regex, same = match.groups()
        if any_:
            return cls(text.strip())
        if same is not None:
            return cls(text.strip(), same=int(same))
        if literal is not None:
            return cls(text.strip(), literal=literal)
        if regex is not None:
            re.compile(regex)
            return cls(text.strip(), regex=regex)
        return cls(text.strip(), op or "==", int(number, 0), bool(size))

    def holds(self, measured: int | None) -> bool:
        if self.op is None or measured is None or self.number is None:
            return self.op is None
        n = self.number
        return {">=": measured >= n, "<=": measured <= n, "==": measured == n, "!=": measured != n,
                ">": measured > n, "<": measured < n}[self.op]


@dataclass(frozen=True)
class CallPattern:
    """``NAME`` or ``NAME(spec, …)``: which call, and what its arguments must be."""

    name: str
    args: tuple[Spec, ...] | None

    @classmethod
    def parse(cls, text: str) -> CallPattern:
        match = _PATTERN.match(text.strip())
        if match is None:
            raise ValueError(f"call pattern {text!r}: write NAME or NAME(constraint, ...)")
        name, inner = match.groups()
        if inner is None:
            return cls(name, None)
        return cls(name, tuple(Spec.parse(part) for part in _split(inner)) if inner.strip() else ())


def _split(text: str) -> list[str]:
    """Top-level commas only (a /regex/ or "text" may hold commas and parentheses)."""
    parts, depth, quoted, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quoted:
            quoted = "" if ch == quoted else quoted
        elif ch in "\"/":
            quoted = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid")

    why: str = Field(default="", max_length=200, description="What the check stands for in the requirement.")
    frameworks: list[str] | None = Field(default=None, description="Only in these frameworks (None: every one).")
    targets: list[str] | None = Field(default=None, description="Only on these targets (None: every one).")

    def applies(self, framework: str, target: str | None) -> bool:
        return (self.frameworks is None or framework in self.frameworks) and (
            self.targets is None or target is None or target in self.targets)


class Calls(_Check):
    """One of the framework's listed calls is made (with its argument constraints, after ``after``)."""

    kind: Literal["calls"]
    any: dict[str, list[str]]
    after: dict[str, list[str]] = Field(default_factory=dict,
                                        description="framework → calls one of which precedes on every path")

    @field_validator("any", "after")
    @classmethod
    def _patterns(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for names in value.values():
            for text in names:
                CallPattern.parse(text)
        return value


class NotCalls(_Check):
    """None of these calls is made (framework → names)."""

    kind: Literal["not_calls"]
    names: dict[str, list[str]]


class FieldSet(_Check):
    """A field of one of these names is set, in live code, to a value meeting ``value``."""

    kind: Literal["field"]
    names: dict[str, list[str]]
    value: str = Field(description="a constraint as for call arguments: >=N, ==N, size>=N …")

    @field_validator("value")
    @classmethod
    def _spec(cls, value: str) -> str:
        Spec.parse(value)
        return value


class CString(_Check):
    """A string literal in live code contains ``text`` (what the console must print)."""

    kind: Literal["string"]
    text: str = Field(min_length=1, max_length=120)


class Pattern(_Check):
    """A regex matches (or, with ``absent``, matches nowhere) in the files matching ``files``."""

    kind: Literal["pattern"]
    files: str = Field(description="Glob over artifact-relative paths, e.g. 'boards/*.overlay'.")
    regex: str
    absent: bool = False


class Trace(_Check):
    """The run's console trace matches the reference plan's predicted trace (judged by running)."""

    kind: Literal["trace"]


Check = Annotated[Calls | NotCalls | FieldSet | CString | Pattern | Trace, Field(discriminator="kind")]

#: Kinds judged by running the artifact, not by reading it.
DYNAMIC_KINDS = frozenset({"trace"})


class Sources:
    """One artifact's files and, for its C, the flow (built on first use, shared by every check)."""

    def __init__(self, files: dict[str, str], framework: str):
        self.files, self.framework = files, framework

    @cached_property
    def flow(self) -> Flow:
        from rac_fw.domains.firmware.verify.sdk import rules
        from rac_fw.domains.firmware.verify.static.model import build_program

        judged = rules(self.framework)
        return Flow(build_program(self.files, judged), judged)

    @cached_property
    def written(self) -> dict[str, list[Call]]:
        """Every call written anywhere in the C (live or not), by name: what an evidence message contrasts."""
        out: dict[str, list[Call]] = {}
        for call in self.flow.program.calls:
            out.setdefault(call.name, []).append(call)
        return out


def _measure(flow: Flow, spec: Spec, reached: Reached, index: int, checked: Call | None = None) -> tuple[bool, str]:
    """(holds, what was measured) for one argument of a reached call (``checked``: the call an ``after``
    pattern's ``@N`` refers to)."""
    call = reached.call
    node = call.arg_node(index) if index < len(call.args) else None
    if spec.same is not None:
        wanted = checked.arg_node(spec.same - 1) if checked is not None else None
        key = object_key(node) if node is not None else None
        return key is not None and key == object_key(wanted), f"argument {index + 1} names {key}"
    if spec.op is None and spec.literal is None and spec.regex is None:
        return True, ""
    if node is None:
        return False, f"argument {index + 1} is missing"
    shown = (node.text or b"").decode(errors="replace")[:60]
    if spec.regex is not None:
        written = " ".join((node.text or b"").decode(errors="replace").split())
        return re.fullmatch(spec.regex, written) is not None, f"argument {index + 1} is {shown}"
    if spec.literal is not None:
        text = shown if node.type in ("string_literal", "concatenated_string") else ""
        return spec.literal in text, f"argument {index + 1} is {shown}"
    value = flow.size_of(node, call.function) if spec.size else flow.value(node, call.function)
    what = "the size of" if spec.size else "the value of"
    if value is None:
        return False, f"{what} argument {index + 1} ({shown}) is not a constant the checker can determine"
    return spec.holds(value), f"{what} argument {index + 1} ({shown}) is {value}"


def _preceded(flow: Flow, reached: Reached, pattern: CallPattern) -> bool:
    """A call matching ``pattern`` was made on every path before ``reached``."""
    if pattern.name not in reached.before:
        return False
    if not pattern.args:
        return True
    return any(occurrence(earlier.call) in reached.before
               and all(_measure(flow, spec, earlier, i, reached.call)[0] for i, spec in enumerate(pattern.args))
               for earlier in flow.calls({pattern.name}))


def _unreached_note(sources: Sources, names: list[str]) -> str:
    written = [c for n in names for c in sources.written.get(n, [])]
    if not written:
        return ""
    first = written[0]
    return (f"; {first.name} is written at {first.location} but no path from an entry point makes that call "
            "(dead code, an uncalled function, or after a return)")


def _judge_calls(check: Calls, sources: Sources, framework: str, why: str) -> list[Evidence]:
    texts = check.any.get(framework)
    if not texts:
        return []
    patterns = [CallPattern.parse(t) for t in texts]
    after_texts = check.after.get(framework, [])
    after = [CallPattern.parse(t) for t in after_texts]
    flow = sources.flow
    reached = flow.calls({p.name for p in patterns})
    problems: list[str] = []
    for r in reached:
        pattern = next(p for p in patterns if p.name == r.call.name)
        measured = [_measure(flow, spec, r, i) for i, spec in enumerate(pattern.args or ())]
        failed = [m for ok, m in measured if not ok]
        if failed:
            problems.append(f"{r.call.location}: {'; '.join(failed)} (wanted {', '.join(t for t in texts)})")
            continue
        if after and not any(_preceded(flow, r, p) for p in after):
            problems.append(f"{r.call.location}: {r.call.name} is not preceded on every path by "
                            f"{' or '.join(after_texts)}")
            continue
        return []
    names = [p.name for p in patterns]
    if problems:
        code = "E_TASK_CALL_ORDER" if all("preceded" in p for p in problems) else "E_TASK_CALL_ARGUMENT"
        return [Evidence(code=code, objects=names, location=problems[0].partition(": ")[0],
                         message=f"no call of {' or '.join(names)} does what the task needs{why}: "
                         + " | ".join(problems[:3]))]
    return [Evidence(code="E_TASK_CALL_MISSING", objects=names,
                     message=f"the program makes no call of {', '.join(names)}{why}{_unreached_note(sources, names)}")]


def judge_static(check: Check, files: dict[str, str], framework: str,
                 sources: Sources | None = None) -> list[Evidence]:
    """The evidence against ``files`` for one static check (empty when it holds)."""
    sources = sources or Sources(files, framework)
    why = f" ({check.why})" if check.why else ""
    if isinstance(check, Calls):
        return _judge_calls(check, sources, framework, why)
    if isinstance(check, NotCalls):
        names = check.names.get(framework, [])
        return [Evidence(code="E_TASK_CALL_FORBIDDEN", location=r.call.location, objects=[r.call.name],
                         message=f"{r.call.location} calls {r.call.name}{why}") for r in sources.flow.calls(set(names))]
    if isinstance(check, FieldSet):
        fields = check.names.get(framework)
        if not fields:
            return []
        spec = Spec.parse(check.value)
        flow = sources.flow
        seen = [f for f in flow.fields if f.name in fields]
        for live in seen:
            value = flow.size_of(live.node, live.function) if spec.size else flow.value(live.node, live.function)
            if spec.holds(value):
                return []
        shown = "; ".join(f"{f.unit.location(f.node, f.function)}: .{f.name} = "
                          f"{(f.node.text or b'').decode(errors='replace')[:40]}" for f in seen[:3])
        return [Evidence(code="E_TASK_FIELD", objects=fields,
                         message=f"no live code sets {' or '.join(fields)} to {check.value}{why}"
                         + (f" (found {shown})" if shown else ""))]
    if isinstance(check, CString):
        if any(check.text in s.name for s in sources.flow.strings):
            return []
        return [Evidence(code="E_TASK_STRING_MISSING", objects=[check.text],
                         message=f"no string literal in live code contains {check.text!r}{why}")]
    if isinstance(check, Pattern):
        regex = re.compile(check.regex, re.M)
        chosen = {p: (_COMMENTS.sub(" ", t) if p.endswith(_C_FILES) else t) for p, t in files.items()
                  if fnmatch.fnmatch(p, check.files)}
        hits = [p for p, t in chosen.items() if regex.search(t)]
        if check.absent and hits:
            return [Evidence(code="E_TASK_PATTERN_PRESENT", location=hits[0], objects=hits,
                             message=f"{hits[0]} matches /{check.regex}/, which the requirement rules out{why}")]
        if not check.absent and not hits:
            return [Evidence(code="E_TASK_PATTERN_MISSING", location=check.files, objects=sorted(chosen),
                             message=f"no file matching {check.files!r} matches /{check.regex}/{why}")]
        return []
    return []  # dynamic kinds are judged by running (judge.py)
