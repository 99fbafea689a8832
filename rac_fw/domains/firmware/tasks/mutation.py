"""The mutation suite: wrong sources the firmware task checks must reject (``mutants.yaml``).

Each mutant edits one file of a task's reference lowering (the artifact the suite's own reference plan
produces) — a call moved into dead code, a 16-byte transfer, a comparison dropped, the order swapped —
and is judged exactly as a model's hand-written sources are (:func:`.judge.judge_sources`: the
independent verifier, the task's checks Φ, and for bare-metal cells a QEMU run). A mutant counts as
rejected when the judgement fails *and* carries one of the evidence codes the mutant expects, so a
mutant is caught for what it stands for. An edit whose text no longer occurs in the reference (a
template changed) is reported as such, never silently skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

_DATA = Path(__file__).resolve().parent / "mutants.yaml"


class Edit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    old: str = Field(min_length=1)
    new: str
    all: bool = False


class Mutant(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str = Field(pattern=r"^[a-z0-9_]{1,60}$")
    kind: str = Field(alias="class", description="What the mutation stands for (dead-code, order, …).")
    task: str
    file: str
    about: str
    edits: list[Edit] = Field(min_length=1)
    expect: list[str] = Field(min_length=1, description="Evidence codes, one of which the rejection carries.")


class MutantError(ValueError):
    """A mutant that cannot be applied (unknown task, missing file, an edit whose text is gone)."""


@dataclass(frozen=True)
class MutantResult:
    mutant: Mutant
    rejected: bool
    """The judgement failed with one of the expected codes."""
    codes: tuple[str, ...]
    unknown: tuple[str, ...]


@cache
def mutants() -> tuple[Mutant, ...]:
    raw = yaml.safe_load(_DATA.read_text(encoding="utf-8"))
    return tuple(Mutant.model_validate(m) for m in raw["mutants"])


def _reference(task_id: str) -> dict[str, str]:
    from rac_fw.domains.firmware.tasks import get_task, reference_lowering

    task = get_task(task_id)
    if task is None:
        raise MutantError(f"mutant task {task_id!r} is not a suite task")
    try:
        return dict(reference_lowering(task).files)
    except LookupError as exc:
        raise MutantError(str(exc)) from None


def mutate(mutant: Mutant) -> dict[str, str]:
    """The task's reference files with the mutant's edits applied."""
    files = dict(_reference(mutant.task))
    if mutant.file not in files:
        raise MutantError(f"mutant {mutant.id}: {mutant.task}'s reference has no file {mutant.file}")
    text = files[mutant.file]
    for index, edit in enumerate(mutant.edits):
        if edit.old not in text:
            raise MutantError(f"mutant {mutant.id}: edits[{index}] text no longer occurs in {mutant.file} "
                              f"({edit.old[:60]!r}): the reference changed, update the mutant")
        text = text.replace(edit.old, edit.new) if edit.all else text.replace(edit.old, edit.new, 1)
    files[mutant.file] = text
    return files


def judge_mutant(mutant: Mutant) -> MutantResult:
    from rac_fw.domains.firmware.facts.load import load_target
    from rac_fw.domains.firmware.tasks import get_task
    from rac_fw.domains.firmware.tasks.judge import judge_sources

    task = get_task(mutant.task)
    assert task is not None
    judged = judge_sources(mutate(mutant), task.framework, load_target(task.target), task)
    codes = tuple(sorted({e.code for e in judged.verification.evidence}))
    rejected = not judged.ok and bool(set(codes) & set(mutant.expect))
    return MutantResult(mutant, rejected, codes, tuple(judged.unknown))
